"""Celery task for an evaluation's plain-mode tasks: thin; the work is `services.plain_item_answer`."""

from __future__ import annotations

from celery import shared_task
from django.db import connection

from creations.evaluations.services import PLAIN_TASK_NAME, plain_item_answer


@shared_task(name=PLAIN_TASK_NAME, ignore_result=True)
def answer_plain_task(item_id: int) -> None:
    try:
        plain_item_answer(item_id=item_id)
    finally:
        connection.close()  # an idle pool thread keeps no database connection
