"""Celery tasks for an evaluation's plain-mode tasks: thin; the work is `services.plain_item_answer`,
and the beat sweep's `services.plain_items_fail_stale`."""

from __future__ import annotations

from celery import shared_task
from django.db import connection

from creations.evaluations.services import PLAIN_TASK_NAME, plain_item_answer, plain_items_fail_stale


@shared_task(name=PLAIN_TASK_NAME, ignore_result=True)
def answer_plain_task(item_id: int) -> None:
    try:
        plain_item_answer(item_id=item_id)
    finally:
        connection.close()  # an idle pool thread keeps no database connection


@shared_task(name="creations.evaluations.tasks.fail_stale_plain_tasks", ignore_result=True)
def fail_stale_plain_tasks() -> None:
    try:
        plain_items_fail_stale()
    finally:
        connection.close()
