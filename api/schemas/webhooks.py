from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema
from pydantic import ConfigDict, StrictBool

from api.schemas.bodies import RequestBody
from api.schemas.text import StoredText
from creations.webhooks.events import WebhookEvent
from creations.webhooks.models import Webhook


class WebhookIn(RequestBody):
    """A new webhook: where to POST, and which events."""

    model_config = ConfigDict(extra="forbid")

    url: StoredText = Field(
        description="An http(s) address; metadata addresses are refused, private ones unless allowed"
    )
    events: list[WebhookEvent] = Field(description="The events it receives")
    description: StoredText = Field(default="", description="What receives them (100 characters)")


class WebhookChange(RequestBody):
    """What to change; a field left out is kept."""

    model_config = ConfigDict(extra="forbid")

    url: StoredText | None = None
    events: list[WebhookEvent] | None = None
    description: StoredText | None = None
    is_active: StrictBool | None = Field(default=None, description="false: nothing is sent until it is switched on")


class WebhookOut(Schema):
    id: int
    workspace: str = Field(description="The workspace's slug")
    url: str
    events: list[str]
    description: str
    is_active: bool
    created_by: str | None
    created_at: datetime
    secret: str | None = Field(
        default=None, description="The signing secret: only in the answer that made the webhook (shown this once)"
    )

    @staticmethod
    def resolve_secret(webhook: Webhook) -> str | None:
        """Never read from the webhook: the operation that makes one sets it on its answer."""
        return None

    @staticmethod
    def resolve_workspace(webhook: Webhook) -> str:
        return webhook.workspace.slug

    @staticmethod
    def resolve_created_by(webhook: Webhook) -> str | None:
        return webhook.created_by.get_username() if webhook.created_by is not None else None


class AttemptOut(Schema):
    number: int
    started_at: datetime
    duration_ms: int
    status_code: int | None = Field(description="The receiver's HTTP status; null: no answer")
    error: str = Field(description="Why it failed, in the platform's words; blank when delivered")


class DeliveryOut(Schema):
    id: int
    uid: str = Field(description="Sent as Atelier-Webhook-Id")
    event: str
    status: str = Field(description="pending, delivered, failed (every attempt did) or refused (the address)")
    attempts: int
    created_at: datetime
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    delivered_at: datetime | None
    attempt_log: list[AttemptOut]

    @staticmethod
    def resolve_uid(delivery: object) -> str:
        return str(getattr(delivery, "uid", ""))

    @staticmethod
    def resolve_attempt_log(delivery: object) -> list[object]:
        return list(getattr(delivery, "attempt_log").all())  # noqa: B009 - prefetched
