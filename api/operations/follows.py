"""Following a run's creation: hear of its runs and comments as its author does (notifications).
Who may is the notifications service's answer (members who see the creation), after the same
visibility check as every run operation."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from api.auth import WRITE, caller
from api.operations.runs import RUN_QUERYSET
from api.schemas.notifications import FollowOut
from creations.access import run_for_viewer_or_404
from creations.notifications.selectors import follows
from creations.notifications.services import follow_set

router = Router(tags=["notifications"])


@router.get(
    "/{run_id}/follow",
    response=FollowOut,
    summary="Whether you follow a run's creation",
)
def get_follow(request: HttpRequest, run_id: int) -> FollowOut:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET).run
    return FollowOut(creation_id=run.creation_id, following=follows(creation=run.creation, user=user))


@router.put(
    "/{run_id}/follow",
    auth=WRITE,
    response=FollowOut,
    summary="Follow a run's creation",
    description=(
        "From now on you hear when its runs end or wait and when it gets comments, as its author does "
        "(each kind as your notification settings say). For the members of its workspace who see it; "
        "following it again changes nothing."
    ),
)
def follow_creation(request: HttpRequest, run_id: int) -> FollowOut:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET).run
    following = follow_set(creation=run.creation, user=user, following=True)
    return FollowOut(creation_id=run.creation_id, following=following)


@router.delete(
    "/{run_id}/follow",
    auth=WRITE,
    response={204: None},
    summary="Stop following a run's creation",
    description="Answers 204 whether or not you followed it.",
)
def unfollow_creation(request: HttpRequest, run_id: int) -> Status[None]:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET).run
    follow_set(creation=run.creation, user=user, following=False)
    return Status(204, None)
