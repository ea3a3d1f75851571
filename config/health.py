"""/healthz: is each component this instance needs reachable? And is any
worker able to run sandboxes? (/healthz/workers answers that alone, for a
monitor of the platform as a whole: a web instance is healthy without workers,
but nobody's creation would start.)"""

import logging
import time
from collections.abc import Callable

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from config.celery import app as celery_app
from sandboxes.host_presence import alive_hosts

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
    # Its one retry at once, not after kombu's default two seconds: a probe of a broker that is down
    # is answered at once, with what is down, instead of two seconds later.
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, timeout=CHECK_TIMEOUT_SECONDS)


CHECKS: dict[str, Callable[[], None]] = {
    "database": _check_database,
    "redis": _check_redis,
    "celery_broker": _check_celery_broker,
}


def _workers_report() -> dict[str, object]:
    """How many worker hosts said lately that they are alive, and how many of them
    can start sandboxes. Counts only: /healthz answers anyone; the hosts' own logs
    say which is which and why."""
    try:
        hosts = alive_hosts()
    except Exception:
        logger.warning("healthz: could not read which workers are alive", exc_info=True)
        return {"ok": False, "error": "unknown: Redis is unreachable; see the server log"}
    working = sum(1 for host in hosts if host.engine_ok)
    return {"ok": working > 0, "hosts_alive": len(hosts), "hosts_with_working_engine": working}


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
    # Reported, but not part of this instance's own health: restarting a web
    # instance because no worker is up would only add an outage.
    body = {"ok": ok, "components": components, "workers": _workers_report()}
    return JsonResponse(body, status=200 if ok else 503)


@never_cache
def healthz_workers(request: HttpRequest) -> JsonResponse:
    """200 when at least one worker host with a working sandbox engine is alive, else 503."""
    report = _workers_report()
    return JsonResponse(report, status=200 if report["ok"] else 503)
