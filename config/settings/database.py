"""Where data lives between requests: the database, Redis, and the caches kept in it."""

from config.settings.base import BASE_DIR, env

# --- Database ---
DATABASES = {"default": env.dj_db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}", conn_max_age=60)}
if (DATABASES["default"] or {}).get("ENGINE") == "django.db.backends.sqlite3":  # None: invalid, reported in checks.py
    # Starting a run locks its workspace's row (creations/runs/admission.py); SQLite has no
    # row locks, so its transactions take the write lock as they begin: claims take turns.
    DATABASES["default"].setdefault("OPTIONS", {})["transaction_mode"] = "IMMEDIATE"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis ---
REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")

# --- Caches ---
# django-ratelimit counts in this cache, shared by every web process (workspaces/rate_limits.py).
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": {
        "BACKEND": "config.redis_cache.PooledRedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "atelier-ratelimit",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    },
}
RATELIMIT_USE_CACHE = "ratelimit"
