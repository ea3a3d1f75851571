"""Mail the platform sends (password resets, invitations, notifications) and how long an invitation lasts."""

from marshmallow.validate import Range

from config.settings.base import DEBUG, env
from config.settings.celery_channels import CELERY_BEAT_SCHEDULE

# --- Mail and invitations ---
# How long an invitation link to a workspace stays valid (it also works only once).
INVITATION_MAX_AGE_SECONDS = env.int("INVITATION_MAX_AGE_SECONDS", default=7 * 24 * 3600, validate=Range(min=60))
# Development prints mail in the terminal. Production sends it: a password reset printed in a log
# reaches nobody and hands the reset link to whoever reads the log (config/system_checks.py refuses it).
EMAIL_BACKEND = env.str(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Atelier <atelier@localhost>")
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25, validate=Range(min=1, max=65535))
# A notification's e-mail is tried this many times (1, 2, 4, … minutes apart) while the mail
# server refuses it, then given up (it stays in the page). Pending e-mails whose task was lost
# (the broker was down) are sent by the sweep below.
NOTIFICATION_EMAIL_ATTEMPTS = env.int("NOTIFICATION_EMAIL_ATTEMPTS", default=5, validate=Range(min=1, max=20))
CELERY_BEAT_SCHEDULE["notifications-send-pending-emails"] = {
    "task": "creations.notifications.tasks.send_pending_emails",
    "schedule": 300.0,
}
# How often an open page asks for the bell's unread count (never while its tab is hidden).
NOTIFICATION_BELL_POLL_SECONDS = env.int("NOTIFICATION_BELL_POLL_SECONDS", default=30, validate=Range(min=1))
# Read notifications are deleted this many days after they were made (unread ones stay until read).
NOTIFICATION_RETENTION_DAYS = env.int("NOTIFICATION_RETENTION_DAYS", default=90, validate=Range(min=1))
CELERY_BEAT_SCHEDULE["notifications-prune-read"] = {
    "task": "creations.notifications.tasks.prune_read_notifications",
    "schedule": 3600.0,
    "options": {"expires": 3600.0},
}
