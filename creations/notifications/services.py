"""Writes for notifications: tell people of an event (once each), mark what they read, save
what each person wants to hear of, follow a creation.

`notify` writes in its caller's transaction and asks for the e-mails once it commits: a
notification of a change that was rolled back is never mailed, and one event told twice (a
retried task, a signal sent again) stays one notification and one e-mail, by its unique key."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from creations.access import creation_visible
from creations.comments.models import Comment
from creations.models import Creation, Run
from creations.notifications.models import (
    KINDS_NOT_MAILED,
    EmailStatus,
    Follow,
    Kind,
    Notification,
    NotificationSetting,
)
from creations.notifications.selectors import Choice, settings_of
from creations.notifications.sending import send_email_on_commit
from workspaces.selectors import membership_get

TITLE_MAX_CHARS = 300
BODY_MAX_CHARS = 2000
FOLLOW_REFUSED = "You can follow the creations you see in your workspaces."


@dataclass(frozen=True)
class Event:
    """What happened, as its notifications tell it."""

    kind: Kind
    key: str
    title: str
    body: str = ""
    path: str = ""
    workspace_id: int | None = None
    creation: Creation | None = None
    run: Run | None = None
    comment: Comment | None = None
    actor: User | None = None


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notify(event: Event, recipients: Iterable[User]) -> list[Notification]:
    """One notification of `event` for each recipient who wants this kind in the page or by
    e-mail (and has not had one of it already); e-mails go after the caller's commit."""
    people = {person.pk: person for person in recipients if person.is_active}
    wanted = settings_of(list(people), kind=event.kind)
    made = []
    for person_id, person in people.items():
        choice = wanted[person_id]
        mail = choice.email and bool(person.email) and event.kind not in KINDS_NOT_MAILED
        if not (choice.in_page or mail):
            continue
        try:
            with transaction.atomic():  # a savepoint: the same event again leaves the first notification
                notification = Notification.objects.create(
                    recipient=person,
                    kind=event.kind,
                    event_key=event.key,
                    workspace_id=event.workspace_id,
                    creation=event.creation,
                    run=event.run,
                    comment=event.comment,
                    actor=event.actor,
                    title=_clipped(event.title, TITLE_MAX_CHARS),
                    body=_clipped(event.body, BODY_MAX_CHARS),
                    path=event.path,
                    in_page=choice.in_page,
                    email_status=EmailStatus.PENDING if mail else EmailStatus.NOT_WANTED,
                )
        except IntegrityError:
            continue
        if mail:
            send_email_on_commit(notification.pk)
        made.append(notification)
    return made


def notification_mark_read(*, notification: Notification, user: User) -> Notification:
    if notification.recipient_id != user.pk:
        raise PermissionDenied("This notification is someone else's.")
    Notification.objects.filter(pk=notification.pk, read_at__isnull=True).update(read_at=timezone.now())
    notification.refresh_from_db(fields=["read_at"])
    return notification


def notifications_mark_all_read(*, user: User) -> int:
    """Every unread notification of `user` read now; how many there were."""
    return Notification.objects.filter(recipient=user, read_at__isnull=True).update(read_at=timezone.now())


PRUNED_AT_ONCE = 1000


def notifications_prune_read(*, now: datetime | None = None) -> int:
    """Delete read notifications made more than NOTIFICATION_RETENTION_DAYS ago (whose e-mail, if
    any, is settled), a batch at a time so no long lock holds the table; how many went."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.NOTIFICATION_RETENTION_DAYS)
    old = Notification.objects.filter(read_at__isnull=False, created_at__lt=cutoff).exclude(
        email_status__in=[EmailStatus.PENDING, EmailStatus.SENDING]
    )
    pruned = 0
    while batch := list(old.values_list("pk", flat=True)[:PRUNED_AT_ONCE]):
        pruned += Notification.objects.filter(pk__in=batch).delete()[0]
    return pruned


def notification_settings_save(*, user: User, choices: Iterable[Choice]) -> None:
    """What `user` wants to hear of, kind by kind; kinds not named keep their choice."""
    choices = list(choices)
    for choice in choices:
        if choice.kind not in Kind.values:
            kinds = ", ".join(Kind.values)
            raise ValidationError({"kind": f"“{choice.kind}” is not a kind of notification: use one of {kinds}."})
    for choice in choices:
        NotificationSetting.objects.update_or_create(
            user=user,
            kind=choice.kind,
            defaults={"in_page": choice.in_page, "email": choice.email and choice.kind not in KINDS_NOT_MAILED},
        )


def follow_set(*, creation: Creation, user: User, following: bool) -> bool:
    """Follow `creation` (hear of its runs and comments), or stop; whether `user` follows it now."""
    membership = membership_get(workspace=creation.workspace_id, user=user)
    if membership is None or not creation_visible(creation=creation, user=user, membership=membership):
        raise PermissionDenied(FOLLOW_REFUSED)
    if following:
        Follow.objects.get_or_create(user=user, creation=creation)
    else:
        Follow.objects.filter(user=user, creation=creation).delete()
    return following
