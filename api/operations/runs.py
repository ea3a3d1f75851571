"""Runs: start one (with an Idempotency-Key), read, list, cancel, run again, fork.

Who may do what is decided where the web pages have it decided: the access
checks in creations/access.py and the run services' own checks.
"""

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Header, Query, Router, Schema, Status
from ninja.errors import HttpError
from ninja.pagination import CursorPagination, paginate

from api.auth import WRITE, caller
from api.idempotency import create_once
from api.inputs import inputs_take
from api.problems import Problem
from api.schemas.runs import ForkIn, RunIn, RunOut, RunStatusName
from api.throttling import SubmissionsThrottled
from creations.access import run_for_viewer_or_404, run_to_cancel_or_404, visible_to_member
from creations.arena.selectors import model_hidden_annotation
from creations.models import Run
from creations.runs.services import creation_fork, creation_submit, run_cancel, run_rerun
from workspaces.models import ModelEndpoint
from workspaces.permissions import workspace_membership_or_404
from workspaces.rate_limits import over_limit, submission_limit

router = Router(tags=["runs"])
workspace_router = Router(tags=["runs"])

RUN_QUERYSET = Run.objects.select_related("creation__workspace", "creation__model_endpoint", "started_by")


def runs_for(user: User) -> QuerySet[Run]:
    """RUN_QUERYSET as RunOut reads it for `user`: each run says whether its model is hidden from them."""
    return RUN_QUERYSET.annotate(model_hidden=model_hidden_annotation(user=user, creation="creation_id"))


def count_submission(request: HttpRequest) -> None:
    """Starting runs (refines too) counts against the same per-person and per-address limits as the web form."""
    if over_limit(request, submission_limit()):
        raise SubmissionsThrottled("You have started many runs in the last minute. Wait a minute and send it again.")


def _endpoint(endpoint_id: int | None) -> ModelEndpoint | None:
    if endpoint_id is None:
        return None
    # Another workspace's endpoint is refused by the service, with its own message.
    endpoint = ModelEndpoint.objects.filter(pk=endpoint_id).first()
    if endpoint is None:
        raise ValidationError({"model_endpoint_id": "No such model; GET …/models lists the ones you may use."})
    return endpoint


@workspace_router.post(
    "/{slug}/runs",
    auth=WRITE,
    response={200: RunOut, 201: RunOut},
    summary="Start a run",
    description=(
        "Makes a creation from the brief and queues its first run. Send an `Idempotency-Key` header "
        "(a fresh UUID) to retry safely: the same key and body answer 200 with the run already made."
    ),
)
def create_run(
    request: HttpRequest,
    response: HttpResponse,
    slug: str,
    payload: RunIn,
    idempotency_key: str | None = Header(None, alias="Idempotency-Key"),
) -> Status[Run]:
    membership = workspace_membership_or_404(slug=slug, user=caller(request))
    user = caller(request)

    def create() -> Run:
        count_submission(request)
        return creation_submit(
            workspace=membership.workspace,
            author=user,
            brief=payload.brief,
            title=payload.title,
            files=inputs_take(workspace=membership.workspace, user=user, ids=payload.input_ids),
            artifact_ids=payload.artifact_ids,
            visibility=payload.visibility,
            model_endpoint=_endpoint(payload.model_endpoint_id),
            max_steps=payload.max_steps,
            max_seconds=payload.max_seconds,
            max_tokens=payload.max_tokens,
        )

    created = create_once(
        user=user, workspace=membership.workspace, key=idempotency_key, payload=payload.model_dump(), create=create
    )
    run = runs_for(user).get(pk=created.run.pk)
    if created.replayed:
        response["Idempotent-Replayed"] = "true"
        return Status(200, run)
    return Status(201, run)


class RunFilters(Schema):
    workspace: str | None = None
    status: RunStatusName | None = None
    creation: int | None = None


def runs_visible_to(user: User, filters: RunFilters) -> QuerySet[Run]:
    """Runs of the person's workspaces that they may see, newest first."""
    runs = (
        runs_for(user)
        .filter(creation__workspace__memberships__user=user)
        .filter(visible_to_member(user, creation="creation__"))
    )
    if filters.workspace is not None:
        runs = runs.filter(creation__workspace__slug=filters.workspace)
    if filters.status is not None:
        runs = runs.filter(status=filters.status)
    if filters.creation is not None:
        runs = runs.filter(creation_id=filters.creation)
    return runs


@router.get("", response=list[RunOut], summary="Runs you may see, newest first")
@paginate(CursorPagination, ordering=("-id",))
def list_runs(request: HttpRequest, filters: Query[RunFilters]) -> QuerySet[Run]:
    user = caller(request)
    if filters.workspace is not None:
        workspace_membership_or_404(slug=filters.workspace, user=user)
    return runs_visible_to(user, filters)


@router.get("/{run_id}", response=RunOut, summary="One run")
def get_run(request: HttpRequest, run_id: int) -> Run:
    user = caller(request)
    return run_for_viewer_or_404(pk=run_id, user=user, queryset=runs_for(user)).run


@router.post("/{run_id}/cancel", auth=WRITE, response={202: RunOut, 409: Problem}, summary="Ask a run to stop")
def cancel_run(request: HttpRequest, run_id: int) -> Status[Run]:
    user = caller(request)
    run = run_to_cancel_or_404(pk=run_id, user=user).run
    if not run_cancel(run=run, user=user):
        run.refresh_from_db(fields=["status"])
        raise HttpError(409, f"Run {run.pk} has already ended ({run.status}): there is nothing to cancel.")
    return Status(202, runs_for(user).get(pk=run.pk))


@router.post("/{run_id}/rerun", auth=WRITE, response={201: RunOut}, summary="Run the same creation again")
def rerun(request: HttpRequest, run_id: int) -> Status[Run]:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET).run
    count_submission(request)
    again = run_rerun(creation=run.creation, user=user)
    return Status(201, runs_for(user).get(pk=again.pk))


@router.post("/{run_id}/fork", auth=WRITE, response={201: RunOut}, summary="A new creation from this one")
def fork(request: HttpRequest, run_id: int, payload: ForkIn) -> Status[Run]:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET).run
    target = None
    if payload.workspace is not None:
        target = workspace_membership_or_404(slug=payload.workspace, user=user).workspace
    count_submission(request)
    forked = creation_fork(creation=run.creation, user=user, brief=payload.brief, workspace=target)
    return Status(201, runs_for(user).get(pk=forked.pk))
