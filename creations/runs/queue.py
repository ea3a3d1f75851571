"""Putting a run on the workers' queue.

The task is sent by name, so the services and the reaper that enqueue runs
need not import the task module (which imports them): no import cycle.
"""

from __future__ import annotations

from celery import current_app
from django.db import transaction

RUN_TASK_NAME = "creations.runs.tasks.run_creation"


def enqueue_run(run_id: int) -> None:
    """Send the run to a worker now; raises when the broker cannot be reached."""
    current_app.send_task(RUN_TASK_NAME, args=[run_id])


def enqueue_run_on_commit(run_id: int) -> None:
    """Send the run once the transaction that wrote it commits, so a worker never looks for a run not there yet."""
    transaction.on_commit(lambda: enqueue_run(run_id))
