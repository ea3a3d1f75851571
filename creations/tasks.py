"""Celery tasks for runs: thin, they take ids and call services."""

from __future__ import annotations

from celery import Task, shared_task

from creations import reaper
from creations.execution import run_execute


# acks_late + reject_on_worker_lost: a task whose worker dies is not lost; a
# redelivered copy finds the run no longer queued and leaves it to the reaper.
@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_creation(self: Task, run_id: int) -> None:
    run_execute(run_id=run_id, worker=str(self.request.hostname or "worker"))


@shared_task(ignore_result=True)
def reap_stale_runs() -> list[int]:
    return reaper.reap_stale_runs()
