"""Celery tasks for webhook deliveries: thin; the attempt is `services.delivery_attempt`, the
sweep `upkeep.deliveries_resend_stranded`, the pruning `upkeep.delivery_logs_prune`."""

from __future__ import annotations

from celery import Task, shared_task

from creations.webhooks.services import DELIVER_TASK_NAME, delivery_attempt
from creations.webhooks.upkeep import deliveries_resend_stranded, delivery_logs_prune


@shared_task(bind=True, name=DELIVER_TASK_NAME, max_retries=None, ignore_result=True)
def deliver_webhook(self: Task, delivery_id: int) -> None:
    """One attempt; a failed one is retried by Celery after the delay the service says
    (growing each time), until the service says no more (WEBHOOK_MAX_ATTEMPTS)."""
    outcome = delivery_attempt(delivery_id=delivery_id)
    if outcome.retry_in is not None:
        raise self.retry(countdown=outcome.retry_in)


@shared_task(name="creations.webhooks.tasks.resend_stranded_deliveries", ignore_result=True)
def resend_stranded_deliveries() -> int:
    return len(deliveries_resend_stranded())


@shared_task(name="creations.webhooks.tasks.prune_delivery_logs", ignore_result=True)
def prune_delivery_logs() -> int:
    return delivery_logs_prune()
