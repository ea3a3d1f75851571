"""Reads for notifications: what a person has (in the page), how many unread (the bell), what
they chose to hear of, and whether they follow a creation.

A notification is shown while its person still belongs to its workspace (an invitation's
person does not yet, by its nature): someone who left stops seeing what is said there."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Exists, OuterRef, Q, QuerySet

from creations.models import Creation
from creations.notifications.models import KINDS_NOT_MAILED, Follow, Kind, Notification, NotificationSetting
from workspaces.models import Membership


@dataclass(frozen=True)
class Choice:
    """What one person wants of one kind."""

    kind: str
    in_page: bool
    email: bool

    @property
    def label(self) -> str:
        return str(Kind(self.kind).label)

    @property
    def mailed(self) -> bool:
        """Whether this kind is ever mailed by the notifications (an invitation mails itself)."""
        return self.kind not in KINDS_NOT_MAILED


def settings_of(user_ids: Collection[int], *, kind: str) -> dict[int, Choice]:
    """Each person's choice for `kind` (on and on when they never chose), in one query."""
    chosen = {
        row.user_id: Choice(kind=kind, in_page=row.in_page, email=row.email)
        for row in NotificationSetting.objects.filter(user_id__in=user_ids, kind=kind)
    }
    return {pk: chosen.get(pk, Choice(kind=kind, in_page=True, email=True)) for pk in user_ids}


def settings_for(user: User) -> list[Choice]:
    """Every kind, in order, with `user`'s choice."""
    chosen = {row.kind: row for row in NotificationSetting.objects.filter(user=user)}
    return [
        Choice(
            kind=kind,
            in_page=chosen[kind].in_page if kind in chosen else True,
            email=(chosen[kind].email if kind in chosen else True) and kind not in KINDS_NOT_MAILED,
        )
        for kind in Kind.values
    ]


def notifications_shown(user: User | AnonymousUser) -> QuerySet[Notification]:
    """The person's notifications in the page, newest first."""
    if not user.is_authenticated:
        return Notification.objects.none()
    still_member = Exists(Membership.objects.filter(workspace_id=OuterRef("workspace_id"), user_id=user.pk))
    return (
        Notification.objects.filter(recipient_id=user.pk, in_page=True)
        .filter(Q(kind=Kind.INVITATION) | Q(workspace__isnull=True) | still_member)
        .select_related("actor")
        .order_by("-created_at", "-pk")
    )


def unread_count(user: User | AnonymousUser) -> int:
    return notifications_shown(user).filter(read_at__isnull=True).count()


def notification_of(*, pk: int, user: User | AnonymousUser) -> Notification | None:
    """The person's own notification (someone else's is as good as missing)."""
    return notifications_shown(user).filter(pk=pk).first()


def follows(*, creation: Creation, user: User | AnonymousUser) -> bool:
    return user.is_authenticated and Follow.objects.filter(creation=creation, user_id=user.pk).exists()


def followers_of(creation_id: int) -> QuerySet[User]:
    return User.objects.filter(pk__in=Follow.objects.filter(creation_id=creation_id).values("user_id"), is_active=True)
