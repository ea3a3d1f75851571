"""Mailing one notification, at most once: the e-mail is claimed by one conditional UPDATE
(pending → sending) before it is sent, so a task delivered twice, or the sweep meeting the
task, sends one e-mail. A send the mail server refused goes back to pending for a retry, and
after NOTIFICATION_EMAIL_ATTEMPTS attempts is marked failed.

Links are absolute, from SITE_URL: the notification's page on the platform, and the page where
its person switches e-mails off."""

from __future__ import annotations

import logging
import smtplib
from datetime import timedelta

from django.conf import settings
from django.core.mail import EmailMessage
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from creations.notifications.models import EmailStatus, Kind, Notification

log = logging.getLogger(__name__)


class SendAgainLater(Exception):
    """The mail server could not take the e-mail now; the notification is pending again."""


def absolute_url(path: str) -> str:
    return f"{settings.SITE_URL.rstrip('/')}{path}"


def email_for(notification: Notification) -> EmailMessage:
    lines = [notification.title]
    if notification.body:
        lines += ["", notification.body]
    if notification.path:
        lines += ["", f"Open it: {absolute_url(notification.path)}"]
    lines += [
        "",
        "--",
        f"You get this e-mail because “{Kind(notification.kind).label}” is switched on for you.",
        f"Choose which e-mails you get: {absolute_url(reverse('notification_settings'))}",
    ]
    return EmailMessage(
        subject=f"[Atelier] {notification.title}",
        body="\n".join(lines),
        to=[notification.recipient.email],
    )


def notification_email_send(notification_id: int) -> bool:
    """Send the notification's e-mail if it is pending and nobody else took it; whether it was sent.
    Raises SendAgainLater when the mail server could not take it and it may be tried again."""
    claimed = Notification.objects.filter(pk=notification_id, email_status=EmailStatus.PENDING).update(
        email_status=EmailStatus.SENDING, email_attempts=F("email_attempts") + 1
    )
    if not claimed:
        return False
    notification = Notification.objects.select_related("recipient").get(pk=notification_id)
    if not notification.recipient.email or not notification.recipient.is_active:
        Notification.objects.filter(pk=notification_id).update(email_status=EmailStatus.NOT_WANTED)
        return False
    try:
        email_for(notification).send()
    except (smtplib.SMTPException, OSError) as error:
        again = notification.email_attempts < settings.NOTIFICATION_EMAIL_ATTEMPTS
        status = EmailStatus.PENDING if again else EmailStatus.FAILED
        Notification.objects.filter(pk=notification_id).update(email_status=status)
        attempt = notification.email_attempts
        log.warning("Notification %s's e-mail was not sent (attempt %s): %s", notification_id, attempt, error)
        if again:
            raise SendAgainLater(str(error)) from error
        return False
    Notification.objects.filter(pk=notification_id).update(email_status=EmailStatus.SENT, emailed_at=timezone.now())
    return True


def pending_email_ids(*, older_than: timedelta) -> list[int]:
    """E-mails still waiting a while after their notification was made: their task was lost
    (the broker was down) or is waiting to retry."""
    cutoff = timezone.now() - older_than
    return list(
        Notification.objects.filter(email_status=EmailStatus.PENDING, created_at__lt=cutoff)
        .order_by("created_at")
        .values_list("pk", flat=True)[:500]
    )
