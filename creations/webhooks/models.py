import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from creations.webhooks.events import ALL_EVENTS
from workspaces.fields import EncryptedTextField
from workspaces.models import Workspace


class Webhook(models.Model):
    """A receiver of the workspace's events: every event it asked for is POSTed to its URL, signed
    with its secret (shown once, stored encrypted like model endpoints' keys)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=500)
    events = models.JSONField(default=list, help_text="The event names it receives.")
    description = models.CharField(max_length=100, blank=True)
    secret = EncryptedTextField()
    is_active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"webhook {self.pk} of {self.workspace_id} to {self.url}"

    def wants(self, event: str) -> bool:
        return event in self.events and event in ALL_EVENTS


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # waiting for its first attempt, or for a retry
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"  # every attempt failed
    REFUSED = "refused", "Refused"  # the address is one the platform does not send to


class WebhookDelivery(models.Model):
    """One event for one webhook: its body (sent the same at every attempt) and how it went."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    # Sent as a header, so a receiver recognises a retry of something it already handled.
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    event = models.CharField(max_length=40)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # While an attempt is on its way: no other may start before then (a worker that died mid-attempt
    # leaves it to pass, then the sweep sends the delivery again: creations.webhooks.services).
    sending_until = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["webhook", "-created_at"], name="webhook_delivery_newest"),
            # The sweep looks among the pending ones alone.
            models.Index(fields=["created_at"], condition=Q(status="pending"), name="webhook_delivery_pending"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=DeliveryStatus.values), name="webhook_delivery_status_valid")
        ]

    def __str__(self) -> str:
        return f"{self.event} to webhook {self.webhook_id} ({self.status})"


class WebhookAttempt(models.Model):
    """One try of a delivery: when, how long, and what came back (a status, or why none did)."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_unique_number"),
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}"

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
