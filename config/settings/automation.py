"""Work that reaches people without anyone watching: webhooks (a workspace's receivers, told when
runs end and versions are made) and schedules (creations refreshed by Celery beat)."""

from marshmallow.validate import Range

from config.settings.base import DEBUG, env
from config.settings.celery_channels import CELERY_BEAT_SCHEDULE

# --- Webhooks ---
# Receivers on loopback or private addresses (a service on the LAN). Link-local and cloud metadata
# addresses are refused always, at save and on every connection after DNS, as for model endpoints.
WEBHOOK_ALLOW_PRIVATE = env.bool("WEBHOOK_ALLOW_PRIVATE", default=DEBUG)
# Each connect, read and write of a delivery; and the whole delivery, however slowly a receiver answers.
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=5.0, validate=Range(min=0.1, max=60))
WEBHOOK_DEADLINE_SECONDS = env.float("WEBHOOK_DEADLINE_SECONDS", default=10.0, validate=Range(min=0.1, max=120))
# Of a receiver's answer only its status counts: at most this much of its body is read, then the connection closes.
WEBHOOK_RESPONSE_MAX_BYTES = env.int("WEBHOOK_RESPONSE_MAX_BYTES", default=16 * 1024, validate=Range(min=0))
# A delivery that fails (no answer, or not 2xx) is tried again after base, 2 x base, 4 x base… seconds,
# at most this many attempts in all (8 with the default base: the last about 64 minutes after the first).
WEBHOOK_MAX_ATTEMPTS = env.int("WEBHOOK_MAX_ATTEMPTS", default=8, validate=Range(min=1, max=20))
WEBHOOK_RETRY_BASE_SECONDS = env.float("WEBHOOK_RETRY_BASE_SECONDS", default=30.0, validate=Range(min=0.01))
WEBHOOKS_MAX_PER_WORKSPACE = env.int("WEBHOOKS_MAX_PER_WORKSPACE", default=20, validate=Range(min=1))
# Deliveries whose task was lost (the broker lost it, or the worker died mid-attempt) are found and
# sent again by this sweep (creations/webhooks/upkeep.py).
CELERY_BEAT_SCHEDULE["webhooks-resend-stranded"] = {
    "task": "creations.webhooks.tasks.resend_stranded_deliveries",
    "schedule": 60.0,
    "options": {"expires": 60.0},  # no pile-up while no worker is up
}
# A delivery's log (its body and attempts) is deleted this many days after it was made, once it is
# settled (delivered, failed or refused); pending ones stay.
WEBHOOK_DELIVERY_RETENTION_DAYS = env.int("WEBHOOK_DELIVERY_RETENTION_DAYS", default=30, validate=Range(min=1))
CELERY_BEAT_SCHEDULE["webhooks-prune-deliveries"] = {
    "task": "creations.webhooks.tasks.prune_delivery_logs",
    "schedule": 3600.0,
    "options": {"expires": 3600.0},
}

# --- Schedules ---
# How often beat looks for creations due a refresh: a refresh starts at most this late.
SCHEDULE_TICK_SECONDS = env.float("SCHEDULE_TICK_SECONDS", default=60.0, validate=Range(min=1))
# The shortest gap a cron line may leave between two refreshes (each one is a whole run).
SCHEDULE_MIN_INTERVAL_MINUTES = env.int("SCHEDULE_MIN_INTERVAL_MINUTES", default=60, validate=Range(min=1))
CELERY_BEAT_SCHEDULE["schedules-tick"] = {
    "task": "creations.schedules.tasks.refresh_due_schedules",
    "schedule": SCHEDULE_TICK_SECONDS,
    "options": {"expires": SCHEDULE_TICK_SECONDS},  # no pile-up while no worker is up
}
