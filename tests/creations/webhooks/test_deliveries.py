"""Webhook deliveries against a receiver on loopback: signed so that the check documented for
receivers (platform/README.md) verifies them and refuses a stale one; retried by a real Celery
worker with growing gaps, each attempt in the delivery log; and refused, at save and at send, for
metadata and private addresses, a name whose DNS answer changed included."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from creations.webhooks.models import DeliveryStatus, Webhook, WebhookDelivery
from creations.webhooks.services import delivery_attempt, webhook_create, webhook_send_test
from tests.support.fixtures.accounts import Team
from tests.support.webhook_receiver import WebhookReceiver

README = Path(__file__).resolve().parents[3] / "platform" / "README.md"


def documented_check() -> Callable[..., bool]:
    """`verify_atelier_webhook`, run from the snippet platform/README.md gives receivers."""
    text = README.read_text()
    section = text[text.index("### Verifying a delivery") :]
    snippet = re.search(r"```python\n(.*?)```", section, re.S)
    assert snippet is not None, "platform/README.md lost its verification snippet"
    scope: dict[str, Any] = {}
    exec(compile(snippet.group(1), str(README), "exec"), scope)  # noqa: S102 - the documented code, as a receiver runs it
    return scope["verify_atelier_webhook"]


def _sent_test(team: Team, url: str) -> tuple[str, WebhookDelivery]:
    made = webhook_create(workspace=team.workspace, user=team.owner, url=url, events=["run.succeeded"])
    with transaction.atomic():
        delivery = webhook_send_test(webhook=made.webhook, user=team.owner)
    return made.secret, delivery


@pytest.mark.django_db
def test_a_delivery_verifies_with_the_documented_check_and_a_stale_one_is_refused(
    team: Team, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("celery.current_app.send_task", lambda *args, **kwargs: None)
    verify = documented_check()
    with WebhookReceiver([200]) as receiver, django_capture_on_commit_callbacks(execute=True):
        secret, delivery = _sent_test(team, receiver.url)
        assert delivery_attempt(delivery_id=delivery.pk).retry_in is None
        (got,) = receiver.wait_for(1)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.DELIVERED, 1, 200)
    assert got.headers["Atelier-Webhook-Event"] == "ping"
    assert got.headers["Atelier-Webhook-Id"] == str(delivery.uid)
    assert verify(secret, got.headers, got.body)
    assert not verify("whsec_another", got.headers, got.body)
    assert not verify(secret, got.headers, got.body + b" ")
    sent_at = int(got.headers["Atelier-Webhook-Timestamp"])
    assert verify(secret, got.headers, got.body, now=sent_at + 299)
    assert not verify(secret, got.headers, got.body, now=sent_at + 301)  # replayed six minutes later


@pytest.mark.django_db(transaction=True)
def test_500_500_200_is_three_attempts_in_the_log_with_growing_gaps(
    team: Team, settings: Any, celery_worker_here: Callable[[], AbstractContextManager[None]]
) -> None:
    # Seconds apart, so the growth shows through a busy machine's lateness (a retry seen 2.8 s late
    # under load made a 0.4 s gap look longer than the 0.8 s one after it).
    settings.WEBHOOK_RETRY_BASE_SECONDS = 3.0
    with WebhookReceiver([500, 500, 200]) as receiver, celery_worker_here():
        _, delivery = _sent_test(team, receiver.url)
        arrivals = receiver.wait_for(3)
        deadline = time.monotonic() + 10
        while WebhookDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.PENDING:
            assert time.monotonic() < deadline, "the delivery log never recorded the third attempt"
            time.sleep(0.05)
    delivery.refresh_from_db()
    log = list(delivery.attempt_log.order_by("number"))
    assert [(a.number, a.status_code) for a in log] == [(1, 500), (2, 500), (3, 200)]
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.DELIVERED, 3)
    assert [r.headers["Atelier-Webhook-Attempt"] for r in arrivals] == ["1", "2", "3"]
    assert len({r.headers["Atelier-Webhook-Id"] for r in arrivals}) == 1
    first_gap = (log[1].started_at - log[0].started_at).total_seconds()
    second_gap = (log[2].started_at - log[1].started_at).total_seconds()
    assert first_gap >= 3.0
    assert second_gap >= 6.0
    assert second_gap > first_gap


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "allow_private", "said"),
    [
        ("http://169.254.169.254/latest/meta-data/", True, "metadata"),
        ("http://[fd00:ec2::254]/", True, "metadata"),
        ("http://[::ffff:169.254.169.254]/", True, "metadata"),
        ("http://10.1.2.3/hooks", False, "private"),
        ("http://127.0.0.1:8080/hooks", False, "private"),
    ],
)
def test_metadata_and_private_addresses_are_refused_at_save(
    team: Team, settings: Any, url: str, allow_private: bool, said: str
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = allow_private
    with pytest.raises(ValidationError) as refused:
        webhook_create(workspace=team.workspace, user=team.owner, url=url, events=["run.failed"])
    assert said in refused.value.message_dict["url"][0]
    assert not Webhook.objects.exists()


@pytest.mark.django_db
def test_a_private_address_is_refused_at_send_when_the_operator_no_longer_allows_it(
    team: Team, settings: Any, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("celery.current_app.send_task", lambda *args, **kwargs: None)
    with WebhookReceiver([200]) as receiver, django_capture_on_commit_callbacks(execute=True):
        _, delivery = _sent_test(team, receiver.url)
        settings.WEBHOOK_ALLOW_PRIVATE = False
        assert delivery_attempt(delivery_id=delivery.pk).retry_in is None  # refused: trying again will not help
        assert receiver.received == []
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.REFUSED, 1, None)
    assert "private or loopback" in delivery.attempt_log.get().error


@pytest.mark.django_db
def test_a_name_whose_dns_answer_changes_to_metadata_is_refused_at_send(
    team: Team, settings: Any, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = False
    monkeypatch.setattr("celery.current_app.send_task", lambda *args, **kwargs: None)
    answers = {"hooks.example.test": ["93.184.215.14"]}  # public when saved
    monkeypatch.setattr("sandboxes.agent.endpoint_addresses.resolve", lambda host, port: answers[host])
    with django_capture_on_commit_callbacks(execute=True):
        _, delivery = _sent_test(team, "https://hooks.example.test/atelier")
    answers["hooks.example.test"] = ["169.254.169.254"]  # rebound to the metadata service
    assert delivery_attempt(delivery_id=delivery.pk).retry_in is None
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.REFUSED
    assert "resolves to a link-local or cloud metadata address" in delivery.last_error


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["member", "viewer", "outsider"])
def test_only_owners_and_admins_add_webhooks(team: Team, who: str) -> None:
    with pytest.raises(PermissionDenied):
        webhook_create(workspace=team.workspace, user=getattr(team, who), url="http://127.0.0.1:9/", events=["ping"])
    assert not Webhook.objects.exists()
