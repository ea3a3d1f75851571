"""Reads for webhooks: a workspace's, one for the person allowed to manage it, a delivery log."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch, QuerySet
from django.http import Http404

from creations.webhooks.models import Webhook, WebhookAttempt, WebhookDelivery
from workspaces.permissions import WEBHOOKS_REFUSED, may_manage_webhooks
from workspaces.selectors import membership_get

DELIVERIES_SHOWN = 50


def webhooks_of_workspace(*, workspace_id: int) -> QuerySet[Webhook]:
    return Webhook.objects.filter(workspace_id=workspace_id).select_related("workspace", "created_by")


def webhook_for_manager_or_404(*, pk: int, user: User | AnonymousUser) -> Webhook:
    """A webhook of a workspace the person belongs to (others are told it does not exist), when
    they may manage its webhooks (members who may not: PermissionDenied saying who may)."""
    webhook = Webhook.objects.select_related("workspace", "created_by").filter(pk=pk).first()
    membership = membership_get(workspace=webhook.workspace_id, user=user) if webhook is not None else None
    if webhook is None or membership is None:
        raise Http404("No such webhook.")
    if not may_manage_webhooks(membership):
        raise PermissionDenied(WEBHOOKS_REFUSED)
    return webhook


def deliveries_of(webhook: Webhook) -> QuerySet[WebhookDelivery]:
    """Its deliveries, newest first, each with its attempts in order."""
    return WebhookDelivery.objects.filter(webhook=webhook).prefetch_related(
        Prefetch("attempt_log", queryset=WebhookAttempt.objects.order_by("number"))
    )
