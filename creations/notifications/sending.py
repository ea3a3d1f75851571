"""Asking a worker to mail a notification, once its transaction commits.

The task is sent by name, so the services that ask need not import the task module (which
imports them). A broker that cannot be reached is logged: the notification stays pending, and
the periodic sweep (`send_pending_emails`) sends it later."""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction

log = logging.getLogger(__name__)

EMAIL_TASK_NAME = "creations.notifications.tasks.send_notification_email"


def send_email_on_commit(notification_id: int) -> None:
    def ask() -> None:
        try:
            current_app.send_task(EMAIL_TASK_NAME, args=[notification_id])
        except Exception as error:
            log.warning("Could not ask for notification %s's e-mail (the sweep will): %s", notification_id, error)

    transaction.on_commit(ask)
