"""Old delivery logs go after WEBHOOK_DELIVERY_RETENTION_DAYS, by beat; pending deliveries stay
whatever their age, and so does every delivery younger than that."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from creations.webhooks.models import DeliveryStatus, Webhook, WebhookAttempt, WebhookDelivery
from creations.webhooks.upkeep import delivery_logs_prune
from tests.support.fixtures.accounts import Team


def _delivery(webhook: Webhook, *, status: str, days_old: float) -> WebhookDelivery:
    delivery = WebhookDelivery.objects.create(webhook=webhook, event="run.succeeded", payload={}, status=status)
    made = timezone.now() - timedelta(days=days_old)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(created_at=made)
    WebhookAttempt.objects.create(delivery=delivery, number=1, started_at=made, duration_ms=5, status_code=500)
    return delivery


@pytest.mark.django_db
def test_settled_deliveries_older_than_the_retention_are_deleted_with_their_attempts(
    team: Team, settings: Any
) -> None:
    settings.WEBHOOK_DELIVERY_RETENTION_DAYS = 30
    webhook = Webhook.objects.create(workspace=team.workspace, url="https://93.184.215.14/h", secret="whsec_x")
    old = [_delivery(webhook, status=status, days_old=31) for status in ("delivered", "failed", "refused")]
    kept = [
        _delivery(webhook, status=DeliveryStatus.DELIVERED, days_old=29),
        _delivery(webhook, status=DeliveryStatus.PENDING, days_old=45),  # still owed to its receiver
    ]
    assert delivery_logs_prune() == 3
    assert set(WebhookDelivery.objects.values_list("pk", flat=True)) == {d.pk for d in kept}
    assert not WebhookAttempt.objects.filter(delivery_id__in=[d.pk for d in old]).exists()
    assert delivery_logs_prune() == 0


def test_beat_prunes_hourly(settings: Any) -> None:
    import creations.notifications.tasks
    import creations.webhooks.tasks  # noqa: F401
    from config.celery import app

    for name in ("webhooks-prune-deliveries", "notifications-prune-read"):
        entry = settings.CELERY_BEAT_SCHEDULE[name]
        assert entry["task"] in app.tasks
        assert entry["schedule"] == 3600.0
