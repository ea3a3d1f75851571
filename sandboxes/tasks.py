"""Celery tasks of the sandboxes app (thin: the work is in sandboxes.janitor)."""

from __future__ import annotations

from celery import shared_task

from sandboxes.janitor import default_run_active_check, sweep


@shared_task(name="sandboxes.tasks.sandbox_janitor", ignore_result=True)
def sandbox_janitor() -> int:
    """Remove orphaned sandboxes; returns how many."""
    return len(sweep(default_run_active_check()))
