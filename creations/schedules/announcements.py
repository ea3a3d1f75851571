"""Who hears of a schedule (creations.schedules.signals): a refresh that made a new version is told
to the person who set the schedule and to the creation's followers; a schedule that paused itself
is told to the person who set it, with the reason. As with a run's news, only people who still see
the creation hear of it (creations.notifications.receivers.those_who_see).

The signals are sent after their change commits, so each receiver writes in a transaction of its
own: its notifications commit together, and their e-mails are asked for after that."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.urls import reverse

from creations.models import Run
from creations.notifications.models import Kind
from creations.notifications.receivers import those_who_see
from creations.notifications.selectors import followers_of
from creations.notifications.services import Event, notify
from creations.schedules.models import Schedule
from creations.schedules.signals import schedule_paused, schedule_refreshed


def connect() -> None:
    schedule_refreshed.connect(_schedule_refreshed, dispatch_uid="schedules-announce-refreshed", weak=False)
    schedule_paused.connect(_schedule_paused, dispatch_uid="schedules-announce-paused", weak=False)


def _schedule_refreshed(sender: Any, *, schedule: Schedule, run: Run, **kwargs: Any) -> None:
    creation = schedule.creation
    event = Event(
        kind=Kind.SCHEDULE_REFRESHED,
        key=f"run:{run.pk}:refreshed",
        title=f"“{creation}” has a new version: {run.label}",
        body=f"Refreshed {schedule.describe()}: {run.instruction}",
        path=f"{reverse('creation_detail', args=[creation.pk])}?run={run.pk}",
        workspace_id=creation.workspace_id,
        creation=creation,
        run=run,
    )
    with transaction.atomic():
        notify(event, those_who_see(creation, [schedule.set_by, *followers_of(creation.pk)]))


def _schedule_paused(sender: Any, *, schedule: Schedule, reason: str, **kwargs: Any) -> None:
    creation = schedule.creation
    paused_at = schedule.paused_at.isoformat() if schedule.paused_at else ""
    event = Event(
        kind=Kind.SCHEDULE_PAUSED,
        # Each pause is news once: set again, it may pause again later.
        key=f"schedule:{schedule.pk}:paused:{paused_at}",
        title=f"Scheduled refreshes of “{creation}” paused",
        body=reason,
        path=reverse("creation_detail", args=[creation.pk]),
        workspace_id=creation.workspace_id,
        creation=creation,
    )
    with transaction.atomic():
        notify(event, those_who_see(creation, [schedule.set_by]))
