"""Celery tasks of the notifications: thin, they call creations.notifications.emails."""

from __future__ import annotations

from datetime import timedelta

from celery import Task, shared_task

from creations.notifications.emails import SendAgainLater, notification_email_send, pending_email_ids
from creations.notifications.sending import EMAIL_TASK_NAME
from creations.notifications.services import notifications_prune_read

# A task still pending this long after its notification was made was lost or is between retries.
SWEEP_AFTER = timedelta(minutes=10)


@shared_task(bind=True, name=EMAIL_TASK_NAME, ignore_result=True, max_retries=None)
def send_notification_email(task: Task, notification_id: int) -> bool:
    try:
        return notification_email_send(notification_id)
    except SendAgainLater as error:
        # Growing gaps: 1, 2, 4, … minutes; the e-mail's own attempts bound how many.
        raise task.retry(countdown=60 * 2 ** min(task.request.retries, 6)) from error


@shared_task(name="creations.notifications.tasks.send_pending_emails", ignore_result=True)
def send_pending_emails() -> int:
    sent = 0
    for notification_id in pending_email_ids(older_than=SWEEP_AFTER):
        try:
            sent += notification_email_send(notification_id)
        except SendAgainLater:
            continue
    return sent


@shared_task(name="creations.notifications.tasks.prune_read_notifications", ignore_result=True)
def prune_read_notifications() -> int:
    return notifications_prune_read()
