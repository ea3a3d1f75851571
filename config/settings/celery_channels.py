"""Celery (the workers that run runs, and beat) and Channels (the live pages' messages)."""

import os

from marshmallow.validate import Range

from config.settings.base import env
from config.settings.database import REDIS_URL

# --- Celery ---
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A run is one thread that waits on the model and on its sandbox. How many run
# at once per worker: each running gVisor sandbox costs CPU even between
# commands, and past about 4 per core a machine finishes fewer runs per minute,
# not more (bench/stream.py measures it). Raise it for slow models.
CELERY_WORKER_POOL = "threads"
CELERY_WORKER_CONCURRENCY = env.int("WORKER_CONCURRENCY", default=4 * (os.cpu_count() or 1), validate=Range(min=1))
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {}

# --- Channels ---
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL], "capacity": 1000, "expiry": 30},
    }
}
