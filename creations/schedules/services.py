"""Writes for schedules: set one (or set it again, which also resumes it), clear it; refresh the
schedules that are due (beat's tick); settle a refresh whose run ended; pause a schedule.

A refresh is `creations.runs.services.run_refine` of the creation's latest succeeded version, in
the name of whoever set the schedule: the same permission, budget, storage and queue checks as
theirs would be. A check that refuses pauses the schedule with its sentence as the reason, shown
on the creation page, until someone sets it again.
"""

from __future__ import annotations

from datetime import datetime, time

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from creations.access import creation_visible
from creations.models import ACTIVE_STATUSES, Creation, Run, RunStatus
from creations.runs.services import run_refine
from creations.runs.versions import files_identical_to_parent
from creations.schedules.cadence import cron_line, next_after
from creations.schedules.models import Schedule, ScheduledRefresh
from creations.schedules.signals import schedule_paused, schedule_refreshed, send_on_commit
from workspaces.permissions import SCHEDULE_REFUSED, may_schedule_refreshes
from workspaces.selectors import membership_get

DEMO_REFUSED = (
    "The demo model replays recordings and cannot refresh a creation on a schedule: "
    "fork it with your team's own model, then set the schedule there."
)


def _check_may_schedule(*, creation: Creation, user: User) -> None:
    membership = membership_get(workspace=creation.workspace_id, user=user)
    if not (
        may_schedule_refreshes(membership) and creation_visible(creation=creation, user=user, membership=membership)
    ):
        raise PermissionDenied(SCHEDULE_REFUSED)


def _clean_instruction(instruction: str) -> str:
    instruction = (instruction or "").strip()
    if not instruction:
        raise ValidationError({"instruction": "Say what each refresh should do, e.g. “update the figures”."})
    if len(instruction) > settings.RUN_INSTRUCTION_MAX_CHARS:
        raise ValidationError(
            {"instruction": f"That is too long (at most {settings.RUN_INSTRUCTION_MAX_CHARS} characters)."}
        )
    return instruction


def schedule_set(
    *,
    creation: Creation,
    user: User,
    cadence: str,
    instruction: str,
    cron: str = "",
    at: time | None = None,
    weekday: int | None = None,
    now: datetime | None = None,
) -> Schedule:
    """Refresh `creation` on this cadence from now on, in `user`'s name (replacing any schedule it
    had, and resuming it if it had paused)."""
    _check_may_schedule(creation=creation, user=user)
    if creation.model_endpoint_id is None:
        raise ValidationError(DEMO_REFUSED)
    errors: dict[str, list[str]] = {}
    line = ""
    try:
        instruction = _clean_instruction(instruction)
    except ValidationError as error:
        errors.update(error.message_dict)
    try:
        line = cron_line(cadence, cron=cron, at=at, weekday=weekday)
    except ValidationError as error:
        errors.update(error.message_dict)
    if errors:
        raise ValidationError(errors)
    now = now or timezone.now()
    schedule, _ = Schedule.objects.update_or_create(
        creation=creation,
        defaults={
            "cadence": cadence,
            "cron": line,
            "instruction": instruction,
            "set_by": user,
            "set_at": now,
            "next_run_at": next_after(line, now),
            "paused_at": None,
            "paused_reason": "",
        },
    )
    return schedule


def schedule_clear(*, creation: Creation, user: User) -> bool:
    """No more refreshes (those made stay); False when it had no schedule."""
    _check_may_schedule(creation=creation, user=user)
    deleted, _ = Schedule.objects.filter(creation=creation).delete()
    return bool(deleted)


def schedule_pause(*, schedule: Schedule, reason: str, now: datetime | None = None) -> bool:
    """Stop refreshing, saying why; False when it was paused already."""
    paused = Schedule.objects.filter(pk=schedule.pk, paused_at__isnull=True).update(
        paused_at=now or timezone.now(), paused_reason=reason
    )
    if paused:
        schedule.refresh_from_db()
        send_on_commit(schedule_paused, schedule=schedule, reason=reason)
    return bool(paused)


def _version_to_refresh(creation: Creation) -> Run | None:
    """The latest succeeded version (the latest ended one if none succeeded); None while a version
    of the creation is still going: the refresh waits for the next time."""
    runs = Run.objects.filter(creation=creation)
    if runs.filter(status__in=ACTIVE_STATUSES).exists():
        return None
    return runs.filter(status=RunStatus.SUCCEEDED).order_by("-version").first() or runs.order_by("-version").first()


def schedule_refresh(*, schedule: Schedule, now: datetime) -> Run | None:
    """The refresh that is due now: a new version, or None (skipped while a version is going, or
    paused because a check refused). The next time is set either way."""
    schedule.next_run_at = next_after(schedule.cron, now)
    schedule.save(update_fields=["next_run_at"])
    latest = _version_to_refresh(schedule.creation)
    if latest is None:
        return None
    setter = schedule.set_by
    try:
        if setter is None or not setter.is_active:
            raise PermissionDenied("the account that set it is gone")
        run = run_refine(run=latest, user=setter, instruction=schedule.instruction, scheduled=True)
    except PermissionDenied:
        who = setter.get_username() if setter else "Whoever set it"
        schedule_pause(
            schedule=schedule,
            reason=f"{who} may no longer start runs of this creation: someone who may should set the schedule again.",
            now=now,
        )
        return None
    except ValidationError as refused:
        schedule_pause(schedule=schedule, reason=" ".join(refused.messages), now=now)
        return None
    ScheduledRefresh.objects.create(schedule=schedule, run=run, due_at=now)
    Schedule.objects.filter(pk=schedule.pk).update(last_run_at=now)
    return run


def schedules_refresh_due(*, now: datetime | None = None) -> list[Run]:
    """Beat's tick: every schedule that is due and not paused refreshes once (times missed while no
    beat ran are not made up). Each in a transaction of its own, its row locked, so two ticks at
    once never refresh one schedule twice."""
    now = now or timezone.now()
    made: list[Run] = []
    due = Schedule.objects.filter(next_run_at__lte=now, paused_at__isnull=True).values_list("pk", flat=True)
    for schedule_id in list(due):
        with transaction.atomic():
            schedule = (
                Schedule.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("creation__workspace", "set_by")
                .filter(pk=schedule_id, next_run_at__lte=now, paused_at__isnull=True)
                .first()
            )
            if schedule is None:
                continue
            run = schedule_refresh(schedule=schedule, now=now)
        if run is not None:
            made.append(run)
    return made


def scheduled_refresh_ended(*, refresh: ScheduledRefresh, status: str) -> None:
    """A refresh's run ended. Succeeded with the files of the version it continued from: recorded
    as identical, and the creation keeps showing that version; with other files: the person who set
    the schedule is told (`schedule_refreshed`). Stopped by a used-up budget: the schedule pauses."""
    run = refresh.run
    if status == RunStatus.QUOTA_EXCEEDED:
        schedule_pause(schedule=refresh.schedule, reason=run.reason or "The workspace's budget is used up.")
        return
    if status != RunStatus.SUCCEEDED:
        return
    identical = files_identical_to_parent(run)
    ScheduledRefresh.objects.filter(pk=refresh.pk).update(files_identical=identical)
    refresh.files_identical = identical
    if identical:
        Creation.objects.filter(pk=run.creation_id, shown_run_id=run.pk).update(shown_run_id=run.parent_id)
        return
    send_on_commit(schedule_refreshed, schedule=refresh.schedule, run=run, refresh=refresh)
