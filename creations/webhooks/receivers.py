"""What makes a delivery: a run's ending (creations.runs.signals) and a schedule pausing itself
(creations.schedules.signals), turned into the events webhooks ask for.

A private creation is its author's alone, and webhooks are its workspace's admins': its runs make
no deliveries."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.dispatch import receiver

from creations.arena.selectors import names_hidden_from_anyone
from creations.events.redaction import text_without_names
from creations.models import Creation, Run, RunStatus, Visibility
from creations.runs.signals import run_finished
from creations.runs.versions import files_identical_to_parent
from creations.schedules.signals import schedule_paused
from creations.webhooks.events import WebhookEvent
from creations.webhooks.services import deliveries_queue


def _absolute(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path


def _creation_data(creation: Creation) -> dict[str, Any]:
    return {"id": creation.pk, "title": creation.title, "url": _absolute(creation.get_absolute_url())}


def run_data(run: Run) -> dict[str, Any]:
    # Read by no one in particular, so by someone who has not voted: a blind contestant's
    # reason does not name its model.
    reason = text_without_names(run.reason, names_hidden_from_anyone(run.creation))
    return {
        "run": {
            "id": run.pk,
            "version": run.version,
            "status": run.status,
            "reason": reason,
            "started_by": run.started_by.get_username() if run.started_by else None,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "url": _absolute(run.get_absolute_url()),
        },
        "creation": _creation_data(run.creation),
    }


def run_event(status: str) -> str:
    if status == RunStatus.SUCCEEDED:
        return WebhookEvent.RUN_SUCCEEDED
    if status == RunStatus.CANCELLED:
        return WebhookEvent.RUN_CANCELLED
    return WebhookEvent.RUN_FAILED


@receiver(run_finished, dispatch_uid="webhooks-run-finished")
def _run_finished(sender: Any, *, run_id: int, status: str, **kwargs: Any) -> None:
    run = Run.objects.select_related("creation", "started_by").get(pk=run_id)
    if run.creation.visibility == Visibility.PRIVATE:
        return
    data = run_data(run)
    workspace_id = run.creation.workspace_id
    deliveries_queue(workspace_id=workspace_id, event=run_event(status), data=data)
    if status == RunStatus.SUCCEEDED and not files_identical_to_parent(run):
        deliveries_queue(workspace_id=workspace_id, event=WebhookEvent.VERSION_MADE, data=data)


@receiver(schedule_paused, dispatch_uid="webhooks-schedule-paused")
def _schedule_paused(sender: Any, *, schedule: Any, reason: str, **kwargs: Any) -> None:
    creation = schedule.creation
    if creation.visibility == Visibility.PRIVATE:
        return
    data = {"creation": _creation_data(creation), "schedule": {"reason": reason, "cadence": schedule.describe()}}
    deliveries_queue(workspace_id=creation.workspace_id, event=WebhookEvent.SCHEDULE_PAUSED, data=data)
