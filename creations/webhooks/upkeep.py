"""Beat's upkeep of deliveries: sending again those a worker or the broker let down, and deleting
old delivery logs.

Stranded deliveries: beat's sweep finds the
pending deliveries nobody is attempting though their time has come (their task was lost with the
broker, or the worker died before it could ask Celery for the retry) and queues them again.

A delivery stranded mid-attempt (its worker died while it was on its way) has its lease
(`sending_until`) run out: the attempt is logged as lost, and counts, so a delivery that kills
its worker every time still ends after WEBHOOK_MAX_ATTEMPTS. Each delivery is swept in a
transaction of its own with its row locked, and its time set to now as it is queued again, so
two sweeps never queue it twice; the attempt itself is claimed by `services.delivery_attempt`,
so a re-sent delivery meeting its original task is still sent once.

Old logs: a settled delivery (delivered, failed, refused) and its attempts are deleted
WEBHOOK_DELIVERY_RETENTION_DAYS after it was made; pending ones stay whatever their age."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from creations.webhooks.models import DeliveryStatus, WebhookAttempt, WebhookDelivery
from creations.webhooks.services import attempt_lease, delivery_task_on_commit

# Left alone this long past its time, a pending delivery's task is taken for lost: Celery's own
# retry fires at its time, and a busy worker may take a while to reach it.
STRANDED_AFTER = timedelta(minutes=2)
SWEPT_AT_ONCE = 500
PRUNED_AT_ONCE = 1000
LOST_ATTEMPT = "No answer was recorded: the worker sending it stopped. It is sent again."


def _stranded(now: datetime) -> Q:
    cutoff = now - STRANDED_AFTER
    attempt_lost = Q(sending_until__lte=now)
    task_lost = Q(sending_until__isnull=True) & (
        Q(next_attempt_at__lte=cutoff) | Q(next_attempt_at__isnull=True, created_at__lte=cutoff)
    )
    return Q(status=DeliveryStatus.PENDING) & (attempt_lost | task_lost)


def deliveries_resend_stranded(*, now: datetime | None = None) -> list[int]:
    """Queue again each pending delivery whose task was lost; the ids queued."""
    now = now or timezone.now()
    queued: list[int] = []
    candidates = WebhookDelivery.objects.filter(_stranded(now)).order_by("created_at")
    for delivery_id in list(candidates.values_list("pk", flat=True)[:SWEPT_AT_ONCE]):
        with transaction.atomic():
            delivery = (
                WebhookDelivery.objects.select_for_update(skip_locked=True)
                .filter(_stranded(now), pk=delivery_id)
                .first()
            )
            if delivery is None:  # taken meanwhile, by a worker or another sweep
                continue
            changes: dict[str, object] = {"sending_until": None, "next_attempt_at": now}
            if delivery.sending_until is not None:
                WebhookAttempt.objects.get_or_create(
                    delivery=delivery,
                    number=delivery.attempts,
                    defaults={
                        "started_at": delivery.sending_until - attempt_lease(),
                        "duration_ms": 0,
                        "error": LOST_ATTEMPT,
                    },
                )
                changes.update(last_error=LOST_ATTEMPT, last_status_code=None)
                if delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
                    changes.update(status=DeliveryStatus.FAILED, next_attempt_at=None)
            WebhookDelivery.objects.filter(pk=delivery.pk).update(**changes)
            if changes.get("status") != DeliveryStatus.FAILED:
                delivery_task_on_commit(delivery.pk)
                queued.append(delivery.pk)
    return queued


def delivery_logs_prune(*, now: datetime | None = None) -> int:
    """Delete settled deliveries (with their attempts) made more than WEBHOOK_DELIVERY_RETENTION_DAYS
    ago, a batch at a time so no long lock holds the table; how many deliveries went."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.WEBHOOK_DELIVERY_RETENTION_DAYS)
    old = WebhookDelivery.objects.filter(created_at__lt=cutoff).exclude(status=DeliveryStatus.PENDING)
    pruned = 0
    while batch := list(old.values_list("pk", flat=True)[:PRUNED_AT_ONCE]):
        WebhookAttempt.objects.filter(delivery_id__in=batch).delete()
        pruned += WebhookDelivery.objects.filter(pk__in=batch).delete()[1].get(WebhookDelivery._meta.label, 0)
    return pruned
