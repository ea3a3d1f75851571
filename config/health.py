"""/healthz: is each component this instance needs reachable?"""

import time
from collections.abc import Callable

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from config.celery import app as celery_app

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
        except Exception as exc:  # any failure means "not ok"; say which and why
            components[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        else:
            components[name] = {"ok": True, "ms": round((time.monotonic() - started) * 1000, 1)}
    ok = all(c["ok"] for c in components.values())
    return JsonResponse({"ok": ok, "components": components}, status=200 if ok else 503)
