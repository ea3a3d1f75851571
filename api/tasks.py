"""Celery tasks of the API: thin, they call services."""

from __future__ import annotations

from celery import shared_task

from api.inputs import staged_inputs_expire


@shared_task(name="api.tasks.expire_staged_inputs", ignore_result=True)
def expire_staged_inputs() -> int:
    return staged_inputs_expire()
