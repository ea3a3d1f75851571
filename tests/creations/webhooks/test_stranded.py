"""Deliveries a worker or the broker let down are sent again by beat's sweep, once: a delivery
whose task was lost, one whose worker died mid-attempt; and two workers given one delivery at the
same moment send it once."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from creations.webhooks.models import DeliveryStatus, WebhookDelivery
from creations.webhooks.services import delivery_attempt, webhook_create, webhook_send_test
from creations.webhooks.upkeep import LOST_ATTEMPT, STRANDED_AFTER, deliveries_resend_stranded
from tests.support.fixtures.accounts import Team
from tests.support.webhook_receiver import WebhookReceiver


@pytest.fixture
def queued_tasks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The deliveries asked of the broker; none reaches a worker unless the test runs it."""
    asked: list[int] = []
    monkeypatch.setattr(
        "celery.current_app.send_task", lambda name, args, **kwargs: asked.append(args[0])
    )
    return asked


def _test_delivery(team: Team, url: str) -> WebhookDelivery:
    made = webhook_create(workspace=team.workspace, user=team.owner, url=url, events=["run.succeeded"])
    with transaction.atomic():
        return webhook_send_test(webhook=made.webhook, user=team.owner)


def _aged(delivery: WebhookDelivery, by: timedelta) -> None:
    WebhookDelivery.objects.filter(pk=delivery.pk).update(created_at=timezone.now() - by)


@pytest.mark.django_db(transaction=True)
def test_a_delivery_whose_task_was_lost_is_sent_again_once(team: Team, queued_tasks: list[int]) -> None:
    with WebhookReceiver([200]) as receiver:
        delivery = _test_delivery(team, receiver.url)
        assert queued_tasks == [delivery.pk]  # ...and the broker lost it

        _aged(delivery, STRANDED_AFTER - timedelta(seconds=10))
        assert deliveries_resend_stranded() == []  # Celery may still be on its way to it

        _aged(delivery, STRANDED_AFTER + timedelta(seconds=10))
        assert deliveries_resend_stranded() == [delivery.pk]
        assert deliveries_resend_stranded() == []  # the next sweep leaves the one queued again
        assert queued_tasks == [delivery.pk, delivery.pk]

        # The lost task turns up after all, beside the re-sent one: the receiver hears once.
        for delivery_id in queued_tasks:
            delivery_attempt(delivery_id=delivery_id)
        receiver.wait_for(1)
    delivery.refresh_from_db()
    assert len(receiver.received) == 1
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.DELIVERED, 1)
    assert deliveries_resend_stranded() == []


@pytest.mark.django_db(transaction=True)
def test_a_delivery_whose_worker_died_mid_attempt_is_logged_and_sent_again(
    team: Team, queued_tasks: list[int], settings: Any
) -> None:
    with WebhookReceiver([200]) as receiver:
        delivery = _test_delivery(team, receiver.url)
        # A worker took attempt 1 and died before it recorded an answer; its lease has run out.
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            attempts=1, sending_until=timezone.now() - timedelta(seconds=1)
        )
        assert deliveries_resend_stranded() == [delivery.pk]
        delivery_attempt(delivery_id=delivery.pk)
        (got,) = receiver.wait_for(1)
    delivery.refresh_from_db()
    log = [(a.number, a.status_code, a.error) for a in delivery.attempt_log.order_by("number")]
    assert log == [(1, None, LOST_ATTEMPT), (2, 200, "")]
    assert got.headers["Atelier-Webhook-Attempt"] == "2"
    assert delivery.status == DeliveryStatus.DELIVERED

    # On its last attempt, a lost one ends the delivery rather than trying forever.
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    again = _test_delivery(team, "https://93.184.215.14/hooks")
    WebhookDelivery.objects.filter(pk=again.pk).update(attempts=1, sending_until=timezone.now())
    assert deliveries_resend_stranded() == []
    again.refresh_from_db()
    assert (again.status, again.last_error) == (DeliveryStatus.FAILED, LOST_ATTEMPT)


def _attempt_on_a_connection_of_its_own(delivery_id: int) -> None:
    try:
        delivery_attempt(delivery_id=delivery_id)
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_two_workers_given_one_delivery_at_once_send_it_once(team: Team, queued_tasks: list[int]) -> None:
    answer = threading.Event()
    with WebhookReceiver([200], hold=answer) as receiver:
        delivery = _test_delivery(team, receiver.url)
        first = threading.Thread(target=_attempt_on_a_connection_of_its_own, args=[delivery.pk])
        first.start()
        receiver.wait_for(1)  # the first worker's attempt is on its way, unanswered
        assert delivery_attempt(delivery_id=delivery.pk).retry_in is None  # the second sends nothing
        assert deliveries_resend_stranded() == []  # nor does the sweep take it for lost
        answer.set()
        first.join(timeout=30)
    delivery.refresh_from_db()
    assert len(receiver.received) == 1
    assert (delivery.status, delivery.attempts, delivery.sending_until) == (DeliveryStatus.DELIVERED, 1, None)


def test_beat_runs_the_sweep_every_minute(settings: Any) -> None:
    import creations.webhooks.tasks  # noqa: F401 - registers the tasks, as the worker's autodiscovery does
    from config.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["webhooks-resend-stranded"]
    assert entry["task"] in app.tasks
    assert entry["schedule"] == 60.0
