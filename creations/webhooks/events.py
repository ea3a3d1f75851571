"""The events a webhook may ask for, in the words its settings show."""

from __future__ import annotations

from django.db import models


class WebhookEvent(models.TextChoices):
    RUN_SUCCEEDED = "run.succeeded", "A run succeeded"
    RUN_FAILED = "run.failed", "A run failed (failed, timed out, hit a limit or the workspace's budget)"
    RUN_CANCELLED = "run.cancelled", "A run was cancelled"
    VERSION_MADE = "version.made", "A new version was made (files that differ from the version it continued)"
    SCHEDULE_PAUSED = "schedule.paused", "A creation's schedule paused itself"


# Sent by "Send test" only, whatever the webhook asked for.
PING = "ping"

ALL_EVENTS = tuple(WebhookEvent.values)
