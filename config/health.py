"""/healthz: is each component this instance needs reachable?"""

import logging
import time
from collections.abc import Callable

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from config.celery import app as celery_app

logger = logging.getLogger(__name__)

CHECK_TIMEOUT_SECONDS = 2


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _check_redis() -> None:
    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=CHECK_TIMEOUT_SECONDS, socket_timeout=CHECK_TIMEOUT_SECONDS
    )
    try:
        client.ping()
    finally:
        client.close()


def _check_celery_broker() -> None:
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=CHECK_TIMEOUT_SECONDS)


CHECKS: dict[str, Callable[[], None]] = {
    "database": _check_database,
    "redis": _check_redis,
    "celery_broker": _check_celery_broker,
}


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    components: dict[str, dict[str, object]] = {}
    for name, check in CHECKS.items():
        started = time.monotonic()
        try:
            check()
        except Exception:  # any failure means "not ok"
            # The why goes to the log only: exception text names hosts, ports and users,
            # and /healthz answers anyone who can reach it.
            logger.warning("healthz: %s is down", name, exc_info=True)
            components[name] = {"ok": False, "error": "unreachable or failing; see the server log"}
        else:
            components[name] = {"ok": True, "ms": round((time.monotonic() - started) * 1000, 1)}
    ok = all(c["ok"] for c in components.values())
    return JsonResponse({"ok": ok, "components": components}, status=200 if ok else 503)
