"""Celery beat's tick for schedules: thin; the work is `services.schedules_refresh_due`."""

from __future__ import annotations

from celery import shared_task

from creations.schedules.services import schedules_refresh_due


@shared_task(name="creations.schedules.tasks.refresh_due_schedules", ignore_result=True)
def refresh_due_schedules() -> int:
    return len(schedules_refresh_due())
