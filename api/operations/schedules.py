"""The schedule of a run's creation: read it, set it (again: which resumes it), clear it. Who may
is creations.schedules' services' answer, after the same visibility check as every run operation."""

from __future__ import annotations

from django.http import Http404, HttpRequest
from ninja import Router, Status

from api.auth import WRITE, caller
from api.operations.runs import RUN_QUERYSET
from api.schemas.schedules import ScheduleIn, ScheduleOut
from creations.access import run_for_viewer_or_404
from creations.schedules.models import Schedule
from creations.schedules.services import schedule_clear, schedule_set

router = Router(tags=["schedules"])
NO_SCHEDULE = "This creation refreshes on no schedule."


@router.get(
    "/{run_id}/schedule",
    response=ScheduleOut,
    summary="The schedule of a run's creation",
    description="For the members of its workspace (a public creation's schedule is not shown to others): 404 if none.",
)
def get_schedule(request: HttpRequest, run_id: int) -> Schedule:
    viewing = run_for_viewer_or_404(pk=run_id, user=caller(request), queryset=RUN_QUERYSET)
    schedule = Schedule.objects.select_related("set_by").filter(creation_id=viewing.run.creation_id).first()
    if schedule is None or viewing.membership is None:
        raise Http404(NO_SCHEDULE)
    return schedule


@router.put(
    "/{run_id}/schedule",
    auth=WRITE,
    response=ScheduleOut,
    summary="Refresh a run's creation on a schedule",
    description=(
        "Each refresh is a new version refined from the latest succeeded one with `instruction`, in your name, "
        "counted in the workspace's budgets; a used-up budget pauses it (`paused_reason`). Setting it again "
        "replaces it and resumes it. Not for creations made with the demo model (422)."
    ),
)
def set_schedule(request: HttpRequest, run_id: int, payload: ScheduleIn) -> Schedule:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET).run
    return schedule_set(creation=run.creation, user=user, **payload.dict())


@router.delete("/{run_id}/schedule", auth=WRITE, response={204: None}, summary="Stop refreshing a run's creation")
def clear_schedule(request: HttpRequest, run_id: int) -> Status[None]:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET).run
    if not schedule_clear(creation=run.creation, user=user):
        raise Http404(NO_SCHEDULE)
    return Status(204, None)
