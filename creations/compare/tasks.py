"""Celery task for comparisons: thin, it takes ids and calls the service."""

from __future__ import annotations

from celery import shared_task

from creations.compare.services import COMPARE_TASK_NAME, comparison_compute


# Safe to run twice: a detail already kept is not made again.
@shared_task(name=COMPARE_TASK_NAME, ignore_result=True, acks_late=True)
def compare_runs(run_a_id: int, run_b_id: int) -> None:
    comparison_compute(run_a_id=run_a_id, run_b_id=run_b_id)
