from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Field, Schema
from pydantic import ConfigDict, StrictBool

from api.schemas.bodies import RequestBody
from creations.notifications.emails import absolute_url
from creations.notifications.models import Kind, Notification

# Kind's values, spelled out for the type checker (the API's settings answer names every kind:
# tests/creations/schedules/test_announcements.py).
KindName = Literal[
    "run_succeeded",
    "run_failed",
    "run_waiting",
    "comment",
    "mention",
    "invitation",
    "schedule_refreshed",
    "schedule_paused",
]


class NotificationOut(Schema):
    id: int
    kind: KindName
    title: str
    body: str
    url: str | None = Field(description="Where it leads on the platform (null: nowhere)")
    workspace: str | None = Field(description="The workspace's slug")
    creation_id: int | None
    run_id: int | None
    comment_id: int | None
    actor: str | None = Field(description="Username of who did it, when someone did")
    created_at: datetime
    read_at: datetime | None
    email_status: str = Field(description="not_wanted, pending, sending, sent or failed")

    @staticmethod
    def resolve_url(notification: Notification) -> str | None:
        return absolute_url(notification.path) if notification.path else None

    @staticmethod
    def resolve_workspace(notification: Notification) -> str | None:
        return notification.workspace.slug if notification.workspace is not None else None

    @staticmethod
    def resolve_actor(notification: Notification) -> str | None:
        return notification.actor.get_username() if notification.actor is not None else None


class ReadAllOut(Schema):
    marked_read: int = Field(description="How many unread notifications were marked read")


class NotificationSettingOut(Schema):
    kind: KindName
    label: str
    in_page: bool
    email: bool
    mailed: bool = Field(description="False for kinds never mailed by notifications (an invitation mails itself)")


class NotificationSettingIn(RequestBody):
    model_config = ConfigDict(extra="forbid")

    kind: KindName
    in_page: StrictBool  # true or false, never a 0 or a "no" read as one
    email: StrictBool


KINDS = [kind.value for kind in Kind]


class UnreadCountOut(Schema):
    unread: int = Field(description="How many of your notifications are unread (what the bell shows)")


class FollowOut(Schema):
    creation_id: int
    following: bool = Field(description="Whether you hear of the creation's runs and comments")
