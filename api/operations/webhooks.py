"""Webhooks: a workspace's (list, add), one's (read, change, delete, send a test) and its delivery
log. Owners and admins only: creations.webhooks' services and selectors decide, as for the pages."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Router, Status
from ninja.pagination import CursorPagination, paginate

from api.auth import WRITE, caller
from api.schemas.webhooks import DeliveryOut, WebhookChange, WebhookIn, WebhookOut
from creations.webhooks.models import Webhook, WebhookDelivery
from creations.webhooks.selectors import deliveries_of, webhook_for_manager_or_404, webhooks_of_workspace
from creations.webhooks.services import (
    membership_to_manage_webhooks,
    webhook_create,
    webhook_delete,
    webhook_send_test,
    webhook_update,
)
from workspaces.permissions import workspace_membership_or_404

workspace_router = Router(tags=["webhooks"])
router = Router(tags=["webhooks"])


@workspace_router.get(
    "/{slug}/webhooks",
    response=list[WebhookOut],
    summary="A workspace's webhooks",
    description="Owners and admins only (others who belong to it: 403).",
)
def list_webhooks(request: HttpRequest, slug: str) -> list[Webhook]:
    user = caller(request)
    membership = workspace_membership_or_404(slug=slug, user=user)
    membership_to_manage_webhooks(workspace=membership.workspace, user=user)
    return list(webhooks_of_workspace(workspace_id=membership.workspace_id))


@workspace_router.post(
    "/{slug}/webhooks",
    auth=WRITE,
    response={201: WebhookOut},
    summary="Add a webhook",
    description=(
        "Every event it asks for is POSTed to `url`, signed with its secret (HMAC-SHA256 over the timestamp, "
        "a dot and the body: platform/README.md, Webhooks). The answer carries the `secret`, this once."
    ),
)
def create_webhook(request: HttpRequest, slug: str, payload: WebhookIn) -> Status[WebhookOut]:
    user = caller(request)
    membership = workspace_membership_or_404(slug=slug, user=user)
    made = webhook_create(
        workspace=membership.workspace,
        user=user,
        url=payload.url,
        events=[str(event) for event in payload.events],
        description=payload.description,
    )
    out = WebhookOut.from_orm(made.webhook)
    out.secret = made.secret
    return Status(201, out)


@router.get("/{webhook_id}", response=WebhookOut, summary="A webhook")
def get_webhook(request: HttpRequest, webhook_id: int) -> Webhook:
    return webhook_for_manager_or_404(pk=webhook_id, user=caller(request))


@router.patch("/{webhook_id}", auth=WRITE, response=WebhookOut, summary="Change a webhook")
def update_webhook(request: HttpRequest, webhook_id: int, payload: WebhookChange) -> Webhook:
    user = caller(request)
    webhook = webhook_for_manager_or_404(pk=webhook_id, user=user)
    return webhook_update(
        webhook=webhook,
        user=user,
        url=payload.url,
        events=[str(event) for event in payload.events] if payload.events is not None else None,
        description=payload.description,
        is_active=payload.is_active,
    )


@router.delete(
    "/{webhook_id}",
    auth=WRITE,
    response={204: None},
    summary="Delete a webhook",
    description="With its delivery log; deliveries waiting for a retry are not sent.",
)
def delete_webhook(request: HttpRequest, webhook_id: int) -> Status[None]:
    user = caller(request)
    webhook_delete(webhook=webhook_for_manager_or_404(pk=webhook_id, user=user), user=user)
    return Status(204, None)


@router.post(
    "/{webhook_id}/test",
    auth=WRITE,
    response={202: DeliveryOut},
    summary="Send a test delivery",
    description="A `ping` event, sent, signed and retried as any other; follow it in the delivery log.",
)
def test_webhook(request: HttpRequest, webhook_id: int) -> Status[DeliveryOut]:
    user = caller(request)
    delivery = webhook_send_test(webhook=webhook_for_manager_or_404(pk=webhook_id, user=user), user=user)
    return Status(202, DeliveryOut.from_orm(deliveries_of(delivery.webhook).get(pk=delivery.pk)))


@router.get(
    "/{webhook_id}/deliveries",
    response=list[DeliveryOut],
    summary="A webhook's delivery log",
    description="Newest first, in pages; each delivery with its attempts (time, answer, error).",
)
@paginate(CursorPagination, ordering=("-id",))
def list_deliveries(request: HttpRequest, webhook_id: int) -> QuerySet[WebhookDelivery]:
    return deliveries_of(webhook_for_manager_or_404(pk=webhook_id, user=caller(request)))
