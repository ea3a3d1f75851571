"""Talking to a running agent: a message it reads before its next model request."""

from django.http import HttpRequest
from ninja import Router, Status

from api.auth import WRITE, caller
from api.problems import Problem, refusals_as_conflicts
from api.schemas.messages import MessageIn, MessageOut
from creations.access import run_for_viewer_or_404
from creations.runs.messages import run_message_send

router = Router(tags=["runs"])


@router.post(
    "/{run_id}/messages",
    auth=WRITE,
    response={201: MessageOut, 409: Problem},
    summary="Tell a running agent something",
    description=(
        "The agent reads it before its next model request; the run's events then hold it "
        "(`person_message`). 409 once the run has ended (refine it instead), or while too many "
        "messages already wait for the agent."
    ),
)
def send_message(request: HttpRequest, run_id: int, payload: MessageIn) -> Status[MessageOut]:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user).run
    with refusals_as_conflicts():
        message = run_message_send(run=run, user=user, text=payload.text)
    return Status(
        201,
        MessageOut(
            id=message.pk,
            run_id=run.pk,
            text=message.text,
            author=user.username,
            author_name=message.author_name,
            created_at=message.created_at,
            delivered=message.delivered_at is not None,
        ),
    )
