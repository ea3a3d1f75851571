"""Runs: what a new workspace may use, and how runs are queued, watched, streamed and bounded."""

from marshmallow.validate import Range

from config.settings.base import DEBUG, env
from config.settings.celery_channels import CHANNEL_LAYERS
from config.settings.database import REDIS_URL
from config.settings.sandbox import SANDBOX_RUN_ACTIVE_CHECK

# --- Quotas ---
# What a new workspace may use; staff change them per workspace in the admin.
QUOTA_DEFAULT_CONCURRENT_RUNS = env.int("QUOTA_DEFAULT_CONCURRENT_RUNS", default=2, validate=Range(min=1, max=1000))
QUOTA_DEFAULT_MONTH_SANDBOX_SECONDS = env.int(
    "QUOTA_DEFAULT_MONTH_SANDBOX_SECONDS", default=20 * 3600, validate=Range(min=0)
)
QUOTA_DEFAULT_MONTH_TOKENS = env.int("QUOTA_DEFAULT_MONTH_TOKENS", default=20_000_000, validate=Range(min=0))
QUOTA_DEFAULT_STORAGE_BYTES = env.int("QUOTA_DEFAULT_STORAGE_BYTES", default=5 * 1024**3, validate=Range(min=0))

# --- Runs ---
# (orchestration, events, streaming)
# Hard ceiling on any run's wall time, whatever a workspace allows; the broker's
# visibility timeout must outlast it, or Redis hands a running task to a second worker.
RUN_MAX_SECONDS_CEILING = env.int("RUN_MAX_SECONDS_CEILING", default=4 * 3600, validate=Range(min=60))
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": RUN_MAX_SECONDS_CEILING + 3600}
RUN_HEARTBEAT_SECONDS = env.float("RUN_HEARTBEAT_SECONDS", default=5.0, validate=Range(min=0.2))
# A starting/running run whose heartbeat is older than this is reaped as failed.
RUN_STALE_AFTER_SECONDS = env.float("RUN_STALE_AFTER_SECONDS", default=30.0, validate=Range(min=1))
# Every worker process looks for such runs this often, in a thread of its own (creations.runs.reaper_thread).
RUN_REAPER_INTERVAL = env.float("RUN_REAPER_INTERVAL", default=10.0, validate=Range(min=0.5))
# A queued run that could have started (its workspace had a slot for it) this long ago may have
# lost its wake-up (Redis restarted without persistence): the reaper wakes a worker for it once
# more. Still queued after RUN_QUEUED_MAX_SECONDS of that: ended. Waiting for the workspace's
# own runs to end does not count.
RUN_QUEUED_REQUEUE_AFTER_SECONDS = env.float("RUN_QUEUED_REQUEUE_AFTER_SECONDS", default=600.0, validate=Range(min=1))
RUN_QUEUED_MAX_SECONDS = env.float("RUN_QUEUED_MAX_SECONDS", default=3600.0, validate=Range(min=1))
# Runs one workspace may have queued at once; a new run past it is refused, saying so (429 in the API).
RUN_QUEUED_MAX_PER_WORKSPACE = env.int("RUN_QUEUED_MAX_PER_WORKSPACE", default=100, validate=Range(min=1))
# Cancels arrive by Redis pub/sub at once; the database is polled as a fallback.
RUN_CANCEL_POLL_SECONDS = env.float("RUN_CANCEL_POLL_SECONDS", default=1.0, validate=Range(min=0.05))
# After a cancel, the agent has this long to stop before its sandbox is stopped (and its output
# lost). Once it has stopped, its output is copied out whatever the time that takes, within the
# copy's own limits.
RUN_CANCEL_GRACE_SECONDS = env.float("RUN_CANCEL_GRACE_SECONDS", default=5.0, validate=Range(min=0))
# Streamed text (command output, model text) is stored every ~100 ms or 8 KB, whichever first.
RUN_EVENT_COALESCE_SECONDS = env.float("RUN_EVENT_COALESCE_SECONDS", default=0.1, validate=Range(min=0))
RUN_EVENT_COALESCE_BYTES = env.int("RUN_EVENT_COALESCE_BYTES", default=8192, validate=Range(min=256))
# A stored event payload stays under this; the full text goes to a file the event points to.
RUN_EVENT_PAYLOAD_MAX_BYTES = env.int("RUN_EVENT_PAYLOAD_MAX_BYTES", default=32 * 1024, validate=Range(min=2048))
# Live output kept per command; beyond it the stream says how much was left out.
RUN_STREAM_MAX_BYTES_PER_CALL = env.int(
    "RUN_STREAM_MAX_BYTES_PER_CALL", default=2 * 1024 * 1024, validate=Range(min=8192)
)
RUN_STREAM_MAX_BYTES_PER_RUN = env.int(  # live output and model text stored for a whole run
    "RUN_STREAM_MAX_BYTES_PER_RUN", default=16 * 1024 * 1024, validate=Range(min=8192)
)
# Events sent inline in a channel-layer announcement (the rest is read from the database).
RUN_ANNOUNCE_INLINE_MAX_BYTES = env.int("RUN_ANNOUNCE_INLINE_MAX_BYTES", default=16 * 1024, validate=Range(min=0))
# A stored run event that does not match its schema (creations/events/schema.py) stops the run
# when true (development and tests, so a drift is found at once); otherwise it is logged and kept.
RUN_EVENT_SCHEMA_STRICT = env.bool("RUN_EVENT_SCHEMA_STRICT", default=DEBUG)
# Announcements travel on a Redis pub/sub channel layer of their own: one PUBLISH per
# announcement (the default layer's group_send takes four round trips), and it resubscribes
# by itself after a Redis restart. Lost messages are fine: the database is the record.
RUN_CHANNEL_LAYER = "runs"
CHANNEL_LAYERS[RUN_CHANNEL_LAYER] = {
    "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
    "CONFIG": {"hosts": [REDIS_URL]},
}
RUN_WS_REPLAY_PAGE = env.int("RUN_WS_REPLAY_PAGE", default=500, validate=Range(min=10))
# A finished run's page shows its latest steps; earlier ones load on demand, and a long
# command output shows its first characters with a link to the whole text.
RUN_PAGE_STEPS = env.int("RUN_PAGE_STEPS", default=30, validate=Range(min=1))
RUN_PAGE_OUTPUT_PREVIEW_CHARS = env.int("RUN_PAGE_OUTPUT_PREVIEW_CHARS", default=4000, validate=Range(min=100))
# An open websocket also checks the database this often, in case announcements were lost.
RUN_WS_POLL_SECONDS = env.float("RUN_WS_POLL_SECONDS", default=5.0, validate=Range(min=0.2))
# ...and, like the API's event stream, checks this often (on a clock of its own, however busy the run)
# that its viewer may still see the run and is still signed in with the session or token it was opened
# with: a removed member, a signed-out browser or a revoked token stops receiving it.
RUN_WS_ACCESS_RECHECK_SECONDS = env.float("RUN_WS_ACCESS_RECHECK_SECONDS", default=10.0, validate=Range(min=0.2))
# Live run sockets open at once, per person and per client address (creations/events/socket_slots.py).
RUN_WS_MAX_PER_USER = env.int("RUN_WS_MAX_PER_USER", default=20, validate=Range(min=1))
RUN_WS_MAX_PER_ADDRESS = env.int("RUN_WS_MAX_PER_ADDRESS", default=60, validate=Range(min=1))
# Bytes of events a live run socket's client may leave unread (past the first 64 KB): beyond it, and
# not taken within a few seconds, the socket is closed with 4408 and a reason, and its slot freed; the
# page reconnects from the last event it showed (config/websocket_backlog.py).
RUN_WS_SEND_BUFFER_MAX_BYTES = env.int(
    "RUN_WS_SEND_BUFFER_MAX_BYTES", default=4 * 1024 * 1024, validate=Range(min=64 * 1024)
)
RUN_WS_SLOT_STALE_SECONDS = max(15.0, 3 * RUN_WS_POLL_SECONDS)  # a socket not seen alive this long is gone
RUN_BRIEF_MAX_CHARS = env.int("RUN_BRIEF_MAX_CHARS", default=20_000, validate=Range(min=100))
RUN_INPUT_MAX_FILES = env.int("RUN_INPUT_MAX_FILES", default=20, validate=Range(min=0))
RUN_INPUT_MAX_BYTES = env.int("RUN_INPUT_MAX_BYTES", default=100 * 1024 * 1024, validate=Range(min=1))  # all files
# A version's whole /testbed, compressed (zstd), kept for the next version to start from; a tree
# over this keeps output/ only (and says so). Counted in the workspace's storage quota.
RUN_SNAPSHOT_MAX_BYTES = env.int("RUN_SNAPSHOT_MAX_BYTES", default=256 * 1024 * 1024, validate=Range(min=1024))
RUN_INSTRUCTION_MAX_CHARS = env.int("RUN_INSTRUCTION_MAX_CHARS", default=4000, validate=Range(min=100))
RUN_MESSAGE_MAX_CHARS = env.int("RUN_MESSAGE_MAX_CHARS", default=4000, validate=Range(min=100))
RUN_MESSAGES_MAX_PENDING = env.int("RUN_MESSAGES_MAX_PENDING", default=20, validate=Range(min=1))
# The sandbox janitor asks the runs which sandboxes are still needed (unless set otherwise).
SANDBOX_RUN_ACTIVE_CHECK = SANDBOX_RUN_ACTIVE_CHECK or "creations.runs.reaper.run_is_active"
