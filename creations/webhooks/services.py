"""Writes for webhooks: add one (its secret shown once), change, delete, make a new secret, send a
test; queue a workspace's event to the webhooks that asked for it; make one attempt at a delivery.

Who may is `workspaces.permissions.may_manage_webhooks` (owners and admins), asked here, so the
pages and the API call these same functions. Addresses are checked against the endpoint address
rules when a webhook is saved (the early answer) and again at every connection (`sending`).
Deliveries are queued after the transaction that caused them commits, and sent by a Celery task.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from creations.webhooks.events import ALL_EVENTS, PING
from creations.webhooks.models import DeliveryStatus, Webhook, WebhookAttempt, WebhookDelivery
from creations.webhooks.sending import post_signed
from creations.webhooks.signing import secret_new
from sandboxes.agent.endpoint_addresses import EndpointAddressRefused, check_base_url_host
from workspaces.models import Membership, Workspace
from workspaces.permissions import WEBHOOKS_REFUSED, may_manage_webhooks
from workspaces.selectors import membership_get

log = logging.getLogger(__name__)

DELIVER_TASK_NAME = "creations.webhooks.tasks.deliver_webhook"
URL_MAX_CHARS = 500
DESCRIPTION_MAX_CHARS = 100


def membership_to_manage_webhooks(*, workspace: Workspace | int, user: User | AnonymousUser) -> Membership:
    membership = membership_get(workspace=workspace, user=user)
    if membership is None or not may_manage_webhooks(membership):
        raise PermissionDenied(WEBHOOKS_REFUSED)
    return membership


# --- checks ----------------------------------------------------------------


def clean_webhook_url(raw: str) -> str:
    """An http(s) address without credentials, whose host does not resolve to an address the
    platform refuses (metadata always; private and loopback unless WEBHOOK_ALLOW_PRIVATE)."""
    url = (raw or "").strip()
    if not url:
        raise ValidationError({"url": "Enter the address that receives the events."})
    if len(url) > URL_MAX_CHARS:
        raise ValidationError({"url": f"The address has at most {URL_MAX_CHARS} characters."})
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError({"url": "Enter an http:// or https:// address, e.g. https://example.com/hooks/atelier."})
    if parts.username or parts.password:
        raise ValidationError({"url": "Leave credentials out of the address: check the signature instead."})
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        raise ValidationError({"url": "The port in this address is not a number."}) from None
    try:
        check_base_url_host(url, allow_private=settings.WEBHOOK_ALLOW_PRIVATE)
    except EndpointAddressRefused as refused:
        raise ValidationError({"url": f"Not allowed: {refused}"}) from None
    return url


def clean_events(events: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(events))
    unknown = [event for event in chosen if event not in ALL_EVENTS]
    if unknown:
        raise ValidationError({"events": f"Unknown events: {', '.join(unknown)}. Choose from {', '.join(ALL_EVENTS)}."})
    if not chosen:
        raise ValidationError({"events": "Choose at least one event to receive."})
    return [event for event in ALL_EVENTS if event in chosen]


def _clean_description(description: str) -> str:
    description = (description or "").strip()
    if len(description) > DESCRIPTION_MAX_CHARS:
        raise ValidationError({"description": f"The description has at most {DESCRIPTION_MAX_CHARS} characters."})
    return description


# --- webhooks ----------------------------------------------------------------


@dataclass(frozen=True)
class NewWebhook:
    webhook: Webhook
    secret: str  # shown now, once; stored encrypted, never shown again


def webhook_create(
    *, workspace: Workspace, user: User, url: str, events: Iterable[str], description: str = ""
) -> NewWebhook:
    membership_to_manage_webhooks(workspace=workspace, user=user)
    fields = {
        "url": clean_webhook_url(url),
        "events": clean_events(events),
        "description": _clean_description(description),
    }
    with transaction.atomic():
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
        if Webhook.objects.filter(workspace=workspace).count() >= settings.WEBHOOKS_MAX_PER_WORKSPACE:
            raise ValidationError(
                f"A workspace has at most {settings.WEBHOOKS_MAX_PER_WORKSPACE} webhooks: delete one first."
            )
        secret = secret_new()
        webhook = Webhook.objects.create(workspace=workspace, created_by=user, secret=secret, **fields)
    return NewWebhook(webhook=webhook, secret=secret)


def webhook_update(
    *,
    webhook: Webhook,
    user: User,
    url: str | None = None,
    events: Iterable[str] | None = None,
    description: str | None = None,
    is_active: bool | None = None,
) -> Webhook:
    """Change what was given (None: keep it). A new address is checked as a new webhook's is."""
    membership_to_manage_webhooks(workspace=webhook.workspace_id, user=user)
    if url is not None:
        webhook.url = clean_webhook_url(url)
    if events is not None:
        webhook.events = clean_events(events)
    if description is not None:
        webhook.description = _clean_description(description)
    if is_active is not None:
        webhook.is_active = is_active
    webhook.save(update_fields=["url", "events", "description", "is_active", "updated_at"])
    return webhook


def webhook_new_secret(*, webhook: Webhook, user: User) -> str:
    """A new secret, shown this once; deliveries sign with it from now on (retries included)."""
    membership_to_manage_webhooks(workspace=webhook.workspace_id, user=user)
    secret = secret_new()
    webhook.secret = secret
    webhook.save(update_fields=["secret", "updated_at"])
    return secret


def webhook_delete(*, webhook: Webhook, user: User) -> None:
    """The webhook and its delivery log; deliveries waiting for a retry are not sent."""
    membership_to_manage_webhooks(workspace=webhook.workspace_id, user=user)
    webhook.delete()


def webhook_send_test(*, webhook: Webhook, user: User) -> WebhookDelivery:
    """A `ping` delivery, sent like any other (signed, retried, logged), whatever the webhook asked for."""
    membership_to_manage_webhooks(workspace=webhook.workspace_id, user=user)
    data = {"message": "A test from Atelier: your receiver is reached.", "sent_by": user.get_username()}
    with transaction.atomic():
        return _delivery_queued(webhook, PING, data)


# --- deliveries ----------------------------------------------------------------


def _envelope(delivery: WebhookDelivery, webhook: Webhook, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(delivery.uid),
        "event": delivery.event,
        "created_at": timezone.now().isoformat(),
        "workspace": webhook.workspace.slug,
        "data": data,
    }


def _delivery_queued(webhook: Webhook, event: str, data: dict[str, Any]) -> WebhookDelivery:
    """Store a delivery and send its task once the caller's transaction commits."""
    delivery = WebhookDelivery(webhook=webhook, event=event, payload={})
    delivery.payload = _envelope(delivery, webhook, data)
    delivery.save()
    delivery_task_on_commit(delivery.pk)
    return delivery


def delivery_task_on_commit(delivery_id: int) -> None:
    """Ask a worker to attempt the delivery once the caller's transaction commits. A broker that
    cannot be reached is logged: the delivery stays pending, and the sweep sends it later
    (creations.webhooks.upkeep)."""

    def send() -> None:
        try:
            current_app.send_task(DELIVER_TASK_NAME, args=[delivery_id])
        except Exception as error:  # the event's own transaction has committed: losing the broker must not undo it
            log.warning("Could not queue webhook delivery %s (the sweep will): %s", delivery_id, error)

    transaction.on_commit(send)


def deliveries_queue(*, workspace_id: int, event: str, data: dict[str, Any]) -> list[WebhookDelivery]:
    """A delivery of `event` for each switched-on webhook of the workspace that asked for it."""
    webhooks = Webhook.objects.select_related("workspace").filter(workspace_id=workspace_id, is_active=True)
    with transaction.atomic():
        return [_delivery_queued(webhook, event, data) for webhook in webhooks if webhook.wants(event)]


def body_of(delivery: WebhookDelivery) -> bytes:
    """What is sent, the same bytes at every attempt (and what the signature covers)."""
    return json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()


def retry_delay(attempts: int) -> float:
    """Seconds to wait before the next try, after `attempts` failed ones: base, 2 x base, 4 x base…"""
    return settings.WEBHOOK_RETRY_BASE_SECONDS * 2 ** (attempts - 1)


@dataclass(frozen=True)
class AttemptOutcome:
    retry_in: float | None  # seconds until the next attempt; None: no more attempts


def attempt_lease() -> timedelta:
    """How long an attempt keeps others off: its whole deadline, and a margin for recording it."""
    return timedelta(seconds=settings.WEBHOOK_DEADLINE_SECONDS + 30)


def _delivery_claimed(delivery_id: int) -> WebhookDelivery | None:
    """Take the delivery's next attempt, or None when it is not ours to make: settled, deleted, not
    due yet, or being attempted by another worker. One conditional UPDATE decides: of two tasks for
    one delivery (a redelivered message, the sweep's re-send meeting Celery's retry) one sends."""
    now = timezone.now()
    claimed = (
        WebhookDelivery.objects.filter(pk=delivery_id, status=DeliveryStatus.PENDING)
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .filter(Q(sending_until__isnull=True) | Q(sending_until__lte=now))
        .update(attempts=F("attempts") + 1, sending_until=now + attempt_lease())
    )
    if not claimed:
        return None
    return WebhookDelivery.objects.select_related("webhook__workspace").get(pk=delivery_id)


def delivery_attempt(*, delivery_id: int) -> AttemptOutcome:
    """Try a pending delivery once, if no other attempt of it is due or on its way, and log the
    attempt; say whether (and when) to try again."""
    delivery = _delivery_claimed(delivery_id)
    if delivery is None:
        return AttemptOutcome(None)
    webhook = delivery.webhook
    number = delivery.attempts
    started_at = timezone.now()
    if not isinstance(webhook.secret, str):
        result_code, error, refused, duration = None, "Its secret cannot be decrypted: make a new secret.", True, 0
    else:
        result = post_signed(
            url=webhook.url,
            secret=webhook.secret,
            delivery_id=str(delivery.uid),
            event=delivery.event,
            body=body_of(delivery),
            attempt=number,
        )
        result_code, error, refused, duration = result.status_code, result.error, result.refused, result.duration_ms
    delivered = result_code is not None and 200 <= result_code < 300
    last = number >= settings.WEBHOOK_MAX_ATTEMPTS
    retry_in = None if delivered or refused or last else retry_delay(number)
    if delivered:
        status = DeliveryStatus.DELIVERED
    elif refused:
        status = DeliveryStatus.REFUSED
    elif retry_in is None:
        status = DeliveryStatus.FAILED
    else:
        status = DeliveryStatus.PENDING
    finished_at = timezone.now()
    with transaction.atomic():
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            started_at=started_at,
            duration_ms=duration,
            status_code=result_code,
            error=error,
        )
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=status,
            last_attempt_at=started_at,
            last_status_code=result_code,
            last_error=error,
            delivered_at=finished_at if delivered else None,
            next_attempt_at=finished_at + timedelta(seconds=retry_in) if retry_in is not None else None,
            sending_until=None,
        )
    return AttemptOutcome(retry_in)
