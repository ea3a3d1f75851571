"""The public API (api/): its rate limit, files staged for runs not yet created, the event stream, pages."""

from marshmallow.validate import Range

from config.settings.base import env
from config.settings.celery_channels import CELERY_BEAT_SCHEDULE

# --- API ---
# API requests per person and minute, all their tokens and their signed-in browser together; past it:
# 429 with Retry-After (api/throttling.py).
API_RATE_LIMIT_PER_MINUTE = env.int("API_RATE_LIMIT_PER_MINUTE", default=240, validate=Range(min=1))
# Bearer tokens that were never made (a typo, or guessing), per client address and minute; past it
# every token from that address is refused (429) until the minute ends, unchecked.
API_INVALID_TOKENS_PER_ADDRESS_PER_MINUTE = env.int(
    "API_INVALID_TOKENS_PER_ADDRESS_PER_MINUTE", default=10, validate=Range(min=1)
)
# Access tokens one person may hold that still work (neither revoked nor expired).
API_TOKENS_MAX_PER_PERSON = env.int("API_TOKENS_MAX_PER_PERSON", default=20, validate=Range(min=1))
# Files uploaded for a run not yet created: how long they wait, and how much one person may keep waiting.
API_STAGED_INPUT_HOURS = env.int("API_STAGED_INPUT_HOURS", default=24, validate=Range(min=1))
API_STAGED_INPUT_MAX_BYTES = env.int(  # four runs' worth of inputs at the default RUN_INPUT_MAX_BYTES
    "API_STAGED_INPUT_MAX_BYTES", default=400 * 1024 * 1024, validate=Range(min=1)
)
CELERY_BEAT_SCHEDULE["api-expire-staged-inputs"] = {"task": "api.tasks.expire_staged_inputs", "schedule": 900.0}
# Comment lines on an idle event stream, so proxies and clients do not take it for dead.
API_SSE_KEEPALIVE_SECONDS = env.float("API_SSE_KEEPALIVE_SECONDS", default=15.0, validate=Range(min=0.2))
NINJA_PAGINATION_PER_PAGE = 50
NINJA_MAX_PER_PAGE_SIZE = 200
