"""Atelier settings, read entirely from the environment.

Every value is parsed with a type (environs); an invalid value stops start-up
with an error naming the variable. Defaults are the embedded ones (SQLite,
local media storage, Redis on localhost, the demo model); production sets
DATABASE_URL, REDIS_URL, SECRET_KEY, FIELD_ENCRYPTION_KEYS, ALLOWED_HOSTS and the
storage settings.
"""

import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

import django_stubs_ext
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key
from environs import Env, EnvValidationError
from marshmallow.validate import OneOf, Range, Regexp

from config.development_secrets import development_secret
from sandboxes.agent.config import DEFAULTS as AGENT_DEFAULTS

# Lets generic Django classes be subscripted at runtime (admin.ModelAdmin[Model]).
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent

env = Env(eager=False)  # collect every invalid variable, then report them together

# --- Core ---
DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS: list[str] = env.list("CSRF_TRUSTED_ORIGINS", default=[])
SECURE_COOKIES = env.bool("SECURE_COOKIES", default=not DEBUG)
SITE_URL = env.str("SITE_URL", default="http://localhost:8000")
# Where development makes and keeps its own secrets (when SECRET_KEY or FIELD_ENCRYPTION_KEYS
# is unset and DEBUG is on): one set per checkout, never shared through the code.
DEVELOPMENT_SECRETS_DIR = env.path("DEVELOPMENT_SECRETS_DIR", default=BASE_DIR / "var")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "channels",
    "django_htmx",
    "storages",
    "workspaces",
    "sandboxes",
    "creations",
    "ninja",
    "api",
    "config",  # its management command builds the deployment's images (config/platform_image.py)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "creations.web.csp.PlatformCSPMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "workspaces.context_processors.workspaces",
            ],
        },
    },
]

# --- Database ---
DATABASES = {"default": env.dj_db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}", conn_max_age=60)}
if (DATABASES["default"] or {}).get("ENGINE") == "django.db.backends.sqlite3":  # None: invalid, reported below
    # Starting a run locks its workspace's row (creations/runs/admission.py); SQLite has no
    # row locks, so its transactions take the write lock as they begin: claims take turns.
    DATABASES["default"].setdefault("OPTIONS", {})["transaction_mode"] = "IMMEDIATE"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis, Celery, Channels ---
REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")
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

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL], "capacity": 1000, "expiry": 30},
    }
}

# --- Auth and sessions ---
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env.bool("BEHIND_TLS_PROXY", default=False) else None

# How long an invitation link to a workspace stays valid (it also works only once).
INVITATION_MAX_AGE_SECONDS = env.int("INVITATION_MAX_AGE_SECONDS", default=7 * 24 * 3600, validate=Range(min=60))
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Atelier <atelier@localhost>")
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25, validate=Range(min=1, max=65535))

# Keys for secrets stored in the database (model endpoint API keys). The first
# key encrypts; all of them decrypt, so keys can be rotated. Required outside DEBUG:
# never derived from SECRET_KEY, so a leaked signing key does not also open them.
FIELD_ENCRYPTION_KEYS: list[str] = env.list("FIELD_ENCRYPTION_KEYS", default=[])

# --- Internationalization ---
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static and media files ---
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "var" / "staticfiles")
MEDIA_ROOT = env.path("MEDIA_ROOT", default=BASE_DIR / "var" / "media")
MEDIA_URL = "media/"
# Serve static files straight from the source folders in development and tests.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
FORMS_URLFIELD_ASSUME_HTTPS = True
STORAGE_BACKEND = env.str("STORAGE_BACKEND", default="local", validate=OneOf(["local", "s3"]))
# With S3, media (images, video, audio, PDF, other downloads) may be answered with a redirect to a
# short-lived signed URL of the store, so big files do not pass through the web processes. The
# access check comes first; pages, SVG and text always come from the artifact origin with its
# headers. A URL signed now works for this long after (time to start a download or a seek, not
# to finish it). Off: every byte comes through the artifact origin.
S3_PRESIGNED_REDIRECTS = env.bool("S3_PRESIGNED_REDIRECTS", default=True)
S3_PRESIGNED_SECONDS = env.int("S3_PRESIGNED_SECONDS", default=300, validate=Range(min=1, max=7 * 24 * 3600))
# The store as browsers and API clients reach it (signed URLs name this host), when it is not
# S3_ENDPOINT_URL, e.g. a store the platform reaches on an internal network. Empty: S3_ENDPOINT_URL.
S3_PUBLIC_ENDPOINT_URL = env.str("S3_PUBLIC_ENDPOINT_URL", default="")
if STORAGE_BACKEND == "s3":
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env.str("S3_BUCKET", default=""),
            # A key prefix inside the bucket, so installations (or test runs) can share one bucket.
            "location": env.str("S3_LOCATION", default="").strip("/"),
            "endpoint_url": env.str("S3_ENDPOINT_URL", default="") or None,
            "region_name": env.str("S3_REGION", default="") or None,
            "access_key": env.str("S3_ACCESS_KEY_ID", default="") or None,
            "secret_key": env.str("S3_SECRET_ACCESS_KEY", default="") or None,
            "default_acl": None,
            "querystring_auth": True,
            # Signature V4: what AWS requires in most regions and S3-compatible stores check.
            "signature_version": "s3v4",
            "file_overwrite": False,
        },
    }
else:
    _default_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
STORAGES = {
    "default": _default_storage,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Sandboxes ---
# (limits and knobs of the isolated computer; see platform/sandbox/README.md)
# runsc (gVisor) isolates; runc is for development only and logs a warning.
SANDBOX_RUNTIME = env.str("SANDBOX_RUNTIME", default="runsc")
# Empty: the tag built by `manage.py build_sandbox_image` (a hash of its inputs).
SANDBOX_IMAGE = env.str("SANDBOX_IMAGE", default="")
SANDBOX_IMAGE_REPOSITORY = env.str("SANDBOX_IMAGE_REPOSITORY", default="atelier-sandbox")
SANDBOX_BASE_IMAGE = env.str("SANDBOX_BASE_IMAGE", default="python:3.11-slim-bookworm")
SANDBOX_DEBIAN_MIRROR = env.str("SANDBOX_DEBIAN_MIRROR", default="http://deb.debian.org/debian")
SANDBOX_BUILD_CACHE_DIR = env.path("SANDBOX_BUILD_CACHE_DIR", default=BASE_DIR / ".cache" / "sandbox-image")
SANDBOX_MEMORY = env.str("SANDBOX_MEMORY", default="2g")
SANDBOX_CPUS = env.float("SANDBOX_CPUS", default=1.0, validate=Range(min=0.1))
# CPU weight of one sandbox (cgroup cpu.shares, Docker's default 1024), set at creation (runsc
# refuses `docker update`): below other containers of the host, e.g. a containerised web or Redis.
SANDBOX_CPU_SHARES = env.int("SANDBOX_CPU_SHARES", default=256, validate=Range(min=2, max=262144))
# The cgroup the sandboxes are created under, with a low CPU weight the worker gives it as it starts
# (sandboxes/cpu_priority.py; with Docker's systemd driver it becomes a slice: atelier-sandboxes.slice).
# Weights only compete among siblings: in Docker's default parent (empty here) busy sandboxes take
# the CPU the live stream needs (platform/sandbox/README.md, "CPU priority").
SANDBOX_CGROUP_PARENT = env.str("SANDBOX_CGROUP_PARENT", default="/atelier-sandboxes")
SANDBOX_PIDS_LIMIT = env.int("SANDBOX_PIDS_LIMIT", default=4096, validate=Range(min=64))  # host threads under gVisor
SANDBOX_NPROC = env.int("SANDBOX_NPROC", default=256, validate=Range(min=16))
SANDBOX_NOFILE = env.int("SANDBOX_NOFILE", default=1024, validate=Range(min=64))
SANDBOX_TMP_SIZE = env.str("SANDBOX_TMP_SIZE", default="512m")
SANDBOX_HOME_SIZE = env.str("SANDBOX_HOME_SIZE", default="256m")
SANDBOX_TESTBED_SIZE = env.str("SANDBOX_TESTBED_SIZE", default="1g")
SANDBOX_START_TIMEOUT = env.float("SANDBOX_START_TIMEOUT", default=60.0, validate=Range(min=1))
SANDBOX_COMMAND_TIMEOUT = env.float(
    "SANDBOX_COMMAND_TIMEOUT", default=AGENT_DEFAULTS["SANDBOX_COMMAND_TIMEOUT"], validate=Range(min=1)
)
SANDBOX_OUTPUT_LIMIT = env.int("SANDBOX_OUTPUT_LIMIT", default=16_000, validate=Range(min=1000))  # chars the model sees
# Characters of a command's output streamed live (the rest is still saved in the sandbox).
SANDBOX_STREAM_LIMIT = env.int("SANDBOX_STREAM_LIMIT", default=1_000_000, validate=Range(min=1000))
# Bytes a command may print before it is stopped (the worker reads no more; the model sees head and tail).
SANDBOX_OUTPUT_MAX_BYTES = env.int("SANDBOX_OUTPUT_MAX_BYTES", default=128 * 1024 * 1024, validate=Range(min=1 << 20))
SANDBOX_COPY_IN_MAX_BYTES = env.int("SANDBOX_COPY_IN_MAX_BYTES", default=200 * 1024 * 1024, validate=Range(min=1))
SANDBOX_COPY_OUT_MAX_BYTES = env.int("SANDBOX_COPY_OUT_MAX_BYTES", default=500 * 1024 * 1024, validate=Range(min=1))
SANDBOX_COPY_OUT_MAX_FILES = env.int("SANDBOX_COPY_OUT_MAX_FILES", default=1000, validate=Range(min=1))
SANDBOX_NETWORK_MODE = env.str("SANDBOX_NETWORK_MODE", default="internet", validate=OneOf(["internet", "none"]))
SANDBOX_NETWORK_NAME = env.str("SANDBOX_NETWORK_NAME", default="atelier-sandbox")
SANDBOX_NETWORK_BRIDGE = env.str("SANDBOX_NETWORK_BRIDGE", default="atl-sandbox0")
SANDBOX_NETWORK_SUBNET = env.str("SANDBOX_NETWORK_SUBNET", default="")  # empty: Docker picks one
SANDBOX_DNS: list[str] = env.list("SANDBOX_DNS", default=[])  # resolvers the sandbox may use; empty: Docker's
# Freeze a sandbox's processes between commands while nothing of the agent's
# runs in it (the model is thinking): an idle gVisor sandbox otherwise costs
# CPU. Needs write access to the sandbox's cgroup; without it, a no-op.
SANDBOX_FREEZE_IDLE = env.bool("SANDBOX_FREEZE_IDLE", default=True)
SANDBOX_POOL_SIZE = env.int("SANDBOX_POOL_SIZE", default=0, validate=Range(min=0))
SANDBOX_POOL_MAX_AGE = env.int("SANDBOX_POOL_MAX_AGE", default=3600, validate=Range(min=60))  # seconds
SANDBOX_ORPHAN_MIN_AGE = env.int("SANDBOX_ORPHAN_MIN_AGE", default=6 * 3600, validate=Range(min=0))  # seconds
# Dotted path of a callable(run_id: str) -> bool telling the janitor whether a run is active.
SANDBOX_RUN_ACTIVE_CHECK = env.str("SANDBOX_RUN_ACTIVE_CHECK", default="")
# Each worker sweeps its own host's engine (at start, then every interval): a
# beat task would land on one host only. sandboxes/host_keeper.py.
SANDBOX_JANITOR_INTERVAL = env.int("SANDBOX_JANITOR_INTERVAL", default=300, validate=Range(min=10))  # seconds
# The worker host this worker's Docker engine belongs to. Every sandbox carries
# it as a label, and a host's janitor and reaper remove only their own host's
# containers. Workers sharing one engine share the id; it must stay the same
# across restarts (a container's host name changes when it is recreated, so
# the deployment files set it), or a restarted host cannot clean up after itself.
SANDBOX_HOST_ID = env.str(
    "SANDBOX_HOST_ID",
    default=socket.gethostname()[:63] or "localhost",
    validate=Regexp(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$", error="SANDBOX_HOST_ID: letters, digits, '.', '_', '-'"),
)
# How often a worker says its host is alive (with whether its engine works), and
# how long that claim lasts: /healthz/workers counts the hosts whose claim is current.
SANDBOX_HOST_BEAT_SECONDS = env.float("SANDBOX_HOST_BEAT_SECONDS", default=10.0, validate=Range(min=0.5))

# --- Agent ---
# (model client and agent loop)
AGENT_MAX_STEPS = env.int(
    "AGENT_MAX_STEPS", default=AGENT_DEFAULTS["AGENT_MAX_STEPS"], validate=Range(min=1)
)  # default per-run step limit
AGENT_MAX_WALL_SECONDS = env.float(
    "AGENT_MAX_WALL_SECONDS", default=AGENT_DEFAULTS["AGENT_MAX_WALL_SECONDS"], validate=Range(min=10)
)
AGENT_MODEL_TIMEOUT = env.float(
    "AGENT_MODEL_TIMEOUT", default=AGENT_DEFAULTS["AGENT_MODEL_TIMEOUT"], validate=Range(min=1)
)  # s without a byte
AGENT_MODEL_CONNECT_TIMEOUT = env.float(
    "AGENT_MODEL_CONNECT_TIMEOUT", default=AGENT_DEFAULTS["AGENT_MODEL_CONNECT_TIMEOUT"], validate=Range(min=0.1)
)
AGENT_MODEL_RETRIES = env.int(
    "AGENT_MODEL_RETRIES", default=AGENT_DEFAULTS["AGENT_MODEL_RETRIES"], validate=Range(min=0, max=20)
)
AGENT_MODEL_BACKOFF_INITIAL = env.float(
    "AGENT_MODEL_BACKOFF_INITIAL", default=AGENT_DEFAULTS["AGENT_MODEL_BACKOFF_INITIAL"], validate=Range(min=0)
)
AGENT_MODEL_BACKOFF_MAX = env.float(
    "AGENT_MODEL_BACKOFF_MAX", default=AGENT_DEFAULTS["AGENT_MODEL_BACKOFF_MAX"], validate=Range(min=0)
)
# Model endpoints on loopback or private addresses (a self-hosted vLLM on the LAN,
# a model on the developer's machine). Link-local and cloud metadata addresses
# are refused whatever this says (sandboxes/agent/endpoint_addresses.py).
MODEL_ENDPOINT_ALLOW_PRIVATE = env.bool("MODEL_ENDPOINT_ALLOW_PRIVATE", default=DEBUG)
# Seconds each call of "Test connection" may take (it makes two, from the web process).
MODEL_ENDPOINT_CHECK_TIMEOUT = env.float("MODEL_ENDPOINT_CHECK_TIMEOUT", default=10.0, validate=Range(min=0.5, max=60))
AGENT_DEMO_TYPING_DELAY = env.float(
    "AGENT_DEMO_TYPING_DELAY", default=AGENT_DEFAULTS["AGENT_DEMO_TYPING_DELAY"], validate=Range(min=0, max=1)
)  # s per piece

# --- Rate limits ---
# django-ratelimit counts in this cache, shared by every web process (workspaces/rate_limits.py).
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "atelier-ratelimit",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    },
}
RATELIMIT_USE_CACHE = "ratelimit"
# A count the cache could not give (a key expiring between django-ratelimit's ADD and INCR) lets
# the request through rather than refusing it; an unreachable Redis does too (workspaces/rate_limits.py).
RATELIMIT_FAIL_OPEN = True
RATE_LIMIT_SIGNUPS_PER_MINUTE = env.int("RATE_LIMIT_SIGNUPS_PER_MINUTE", default=5, validate=Range(min=1))
RATE_LIMIT_SUBMISSIONS_PER_MINUTE = env.int("RATE_LIMIT_SUBMISSIONS_PER_MINUTE", default=10, validate=Range(min=1))
RATE_LIMIT_SUBMISSIONS_PER_ADDRESS_PER_MINUTE = env.int(
    "RATE_LIMIT_SUBMISSIONS_PER_ADDRESS_PER_MINUTE", default=30, validate=Range(min=1)
)
# API requests per token (or signed-in browser) and minute; past it: 429 with Retry-After (api/throttling.py).
API_RATE_LIMIT_PER_MINUTE = env.int("API_RATE_LIMIT_PER_MINUTE", default=240, validate=Range(min=1))
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
RUN_REAPER_INTERVAL = env.float("RUN_REAPER_INTERVAL", default=10.0, validate=Range(min=0.5))
# A queued run that could have started (its workspace had a slot for it) this long ago may have
# lost its wake-up (Redis restarted without persistence): the reaper wakes a worker for it once
# more. Still queued after RUN_QUEUED_MAX_SECONDS of that: ended. Waiting for the workspace's
# own runs to end does not count.
RUN_QUEUED_REQUEUE_AFTER_SECONDS = env.float("RUN_QUEUED_REQUEUE_AFTER_SECONDS", default=600.0, validate=Range(min=1))
RUN_QUEUED_MAX_SECONDS = env.float("RUN_QUEUED_MAX_SECONDS", default=3600.0, validate=Range(min=1))
# Cancels arrive by Redis pub/sub at once; the database is polled as a fallback.
RUN_CANCEL_POLL_SECONDS = env.float("RUN_CANCEL_POLL_SECONDS", default=1.0, validate=Range(min=0.05))
# After a cancel, the output is copied out for at most this long before the sandbox is stopped.
RUN_CANCEL_GRACE_SECONDS = env.float("RUN_CANCEL_GRACE_SECONDS", default=1.5, validate=Range(min=0))
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
# ...and checks that its viewer may still see the run (a removed member stops receiving it).
RUN_WS_ACCESS_RECHECK_SECONDS = env.float("RUN_WS_ACCESS_RECHECK_SECONDS", default=10.0, validate=Range(min=0.2))
# Live run sockets open at once, per person and per client address (creations/events/socket_slots.py).
RUN_WS_MAX_PER_USER = env.int("RUN_WS_MAX_PER_USER", default=20, validate=Range(min=1))
RUN_WS_MAX_PER_ADDRESS = env.int("RUN_WS_MAX_PER_ADDRESS", default=60, validate=Range(min=1))
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
CELERY_BEAT_SCHEDULE["runs-reaper"] = {
    "task": "creations.runs.tasks.reap_stale_runs",
    "schedule": RUN_REAPER_INTERVAL,
    "options": {"expires": RUN_REAPER_INTERVAL},  # no pile-up while no worker is up
}

# --- Web / artifacts ---
# (pages, artifact origin, previews)
# Artifacts are served only from this separate origin, never with the platform's cookies:
# another host name in production. Development (`make run` serves both ports) uses another
# port of localhost, so the platform answers at localhost:8000 and 127.0.0.1:8000 alike.
ARTIFACT_ORIGIN = env.str(
    "ARTIFACT_ORIGIN", default="http://localhost:8001" if DEBUG else "http://127.0.0.1:8000"
).rstrip("/")
ARTIFACT_URL_MAX_AGE = env.int("ARTIFACT_URL_MAX_AGE", default=3600, validate=Range(min=30))  # s a signed URL lives
ARTIFACT_INLINE_RENDER_MAX_BYTES = env.int(  # markdown/text larger than this is offered as a download
    "ARTIFACT_INLINE_RENDER_MAX_BYTES", default=512 * 1024, validate=Range(min=1024)
)
UPLOAD_MAX_FILE_BYTES = env.int("UPLOAD_MAX_FILE_BYTES", default=25 * 1024 * 1024, validate=Range(min=1))
UPLOAD_ALLOWED_EXTENSIONS: list[str] = env.list(
    "UPLOAD_ALLOWED_EXTENSIONS",
    default=[
        *("txt", "md", "csv", "tsv", "json", "geojson", "yaml", "yml", "xml", "html", "pdf", "py", "js", "css"),
        *("png", "jpg", "jpeg", "gif", "webp", "svg", "mp3", "wav", "ogg", "mid", "midi", "mp4", "webm"),
        *("xlsx", "docx", "pptx", "ttf", "otf", "zip"),
    ],
)
GALLERY_PAGE_SIZE = env.int("GALLERY_PAGE_SIZE", default=24, validate=Range(min=1, max=200))
# Previews (pictures, MIDI rendered to audio, markdown and code rendered to HTML) are
# made at ingestion in a sandbox with no network (creations/artifacts/previews.py):
# each tool bounded in time, the sandbox in memory, each file it returns in size.
PREVIEW_TIMEOUT = env.float("PREVIEW_TIMEOUT", default=30.0, validate=Range(min=1))  # s per tool
PREVIEW_MEMORY_BYTES = env.int("PREVIEW_MEMORY_BYTES", default=1024 * 1024 * 1024, validate=Range(min=64 * 1024 * 1024))
PREVIEW_MAX_INPUT_BYTES = env.int("PREVIEW_MAX_INPUT_BYTES", default=200 * 1024 * 1024, validate=Range(min=1))
PREVIEW_OUTPUT_MAX_BYTES = env.int("PREVIEW_OUTPUT_MAX_BYTES", default=32 * 1024 * 1024, validate=Range(min=64 * 1024))
PREVIEW_WIDTH = env.int("PREVIEW_WIDTH", default=640, validate=Range(min=64, max=4096))
MIDDLEWARE.insert(1, "creations.artifacts.origin.ArtifactOriginMiddleware")  # host-based dispatch, first

# --- Logging ---
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO", validate=OneOf(["DEBUG", "INFO", "WARNING", "ERROR"]))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}


# --- Validation: stop start-up on any invalid variable, naming it ---
def _origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, the port filled in as a browser would."""
    parts = urlsplit(url)
    return parts.scheme, parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


try:
    env.seal()
except EnvValidationError as exc:
    raise ImproperlyConfigured(f"Invalid environment: {exc}") from None
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set (or DEBUG=true for local development).")
    SECRET_KEY = development_secret(DEVELOPMENT_SECRETS_DIR / "development-secret-key", get_random_secret_key)
if not FIELD_ENCRYPTION_KEYS:
    if not DEBUG:
        raise ImproperlyConfigured(
            "FIELD_ENCRYPTION_KEYS must be set: the key that encrypts stored API keys, apart from SECRET_KEY."
            ' Make one with: python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
        )
    FIELD_ENCRYPTION_KEYS = [
        development_secret(
            DEVELOPMENT_SECRETS_DIR / "development-field-encryption-key", lambda: Fernet.generate_key().decode()
        )
    ]
if STORAGE_BACKEND == "s3" and not _default_storage["OPTIONS"]["bucket_name"]:  # type: ignore[index]
    raise ImproperlyConfigured("S3_BUCKET must be set when STORAGE_BACKEND=s3.")
if S3_PUBLIC_ENDPOINT_URL and urlsplit(S3_PUBLIC_ENDPOINT_URL).scheme not in {"http", "https"}:
    raise ImproperlyConfigured("S3_PUBLIC_ENDPOINT_URL must be an http(s) URL, e.g. https://atelier-store.example.net")
# Web / artifacts: the artifact origin must be another host name (cookies are per
# host, not per port) and is accepted as a Host header. In development another port of
# the same host will do: artifacts that run scripts always run under a CSP sandbox (an
# opaque origin that cannot read cookies), and no real user's session is at stake.
_artifact_host = urlsplit(ARTIFACT_ORIGIN).hostname or ""
if not _artifact_host or urlsplit(ARTIFACT_ORIGIN).scheme not in {"http", "https"}:
    raise ImproperlyConfigured("ARTIFACT_ORIGIN must be an http(s) origin, e.g. https://artifacts.example.net")
try:
    _same_origin = _origin(ARTIFACT_ORIGIN) == _origin(SITE_URL)
except ValueError as exc:
    raise ImproperlyConfigured(f"ARTIFACT_ORIGIN or SITE_URL: {exc}") from None
if _artifact_host == urlsplit(SITE_URL).hostname and (not DEBUG or _same_origin):
    raise ImproperlyConfigured(
        "ARTIFACT_ORIGIN must use another host name than SITE_URL (cookies ignore ports);"
        " with DEBUG=true another port of the same host will do."
    )
if _artifact_host not in ALLOWED_HOSTS and "*" not in ALLOWED_HOSTS:
    ALLOWED_HOSTS = [*ALLOWED_HOSTS, _artifact_host]
