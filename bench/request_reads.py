"""Request reads benchmark: what the reads every API request and dashboard make cost in CPU.

    DATABASE_URL=postgres://... .venv/bin/python bench/request_reads.py [--rounds 8] [--requests 50]

Two reads measured, each through Django's test client (the whole request: middleware, token
check, rate limits, the view; no network), in a database and a Redis of the benchmark's own:
- the rate-limit counters in Redis, three cache calls per API request (config/redis_cache.py:
  one Redis client per connection pool);
- a workspace's month of usage, one statement of a dozen subqueries that the dashboard, the
  API's workspace operations and every budget check read (creations/usage/reused_statement.py:
  built by the ORM once, run with each call's values).

Baseline, in the same run, rounds alternating: Django's own Redis cache, which makes a client per
call, and the usage statement built and compiled by the ORM on each call, as both were. Printed:
p50 per request of each page, and the usage read alone. Writes bench/results/request_reads.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.urls import reverse  # noqa: E402

from api.tokens import token_create  # noqa: E402
from bench.measuring import machine_speed, report_opening, write_results  # noqa: E402 - beside this file
from creations.usage import selectors  # noqa: E402
from devstack.databases import throwaway_database  # noqa: E402
from devstack.redis_server import RedisServer  # noqa: E402
from workspaces.models import Membership, Role, Workspace  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "request_reads.json"
BENCH_DB_SUFFIX = "_bench_request_reads"
DJANGO_REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"


@contextmanager
def as_before(redis_url: str) -> Iterator[None]:
    """Django's own Redis cache for the rate limits, and the usage statement built on every call."""
    reused = selectors._MONTH_USAGE
    selectors._MONTH_USAGE = selectors.ReusedStatement(selectors._month_usage_rows)
    selectors._MONTH_USAGE._compiled_for = lambda *args: None  # type: ignore[method-assign]
    try:
        with override_settings(CACHES=caches_on(redis_url, DJANGO_REDIS_CACHE)):
            yield
    finally:
        selectors._MONTH_USAGE = reused


@contextmanager
def as_now(redis_url: str) -> Iterator[None]:
    configured: dict[str, Any] = settings.CACHES
    with override_settings(CACHES=caches_on(redis_url, configured["ratelimit"]["BACKEND"])):
        yield


def caches_on(redis_url: str, backend: str) -> dict[str, Any]:
    configured: dict[str, Any] = settings.CACHES
    return {**configured, "ratelimit": {**configured["ratelimit"], "BACKEND": backend, "LOCATION": redis_url}}


def timed(work: Callable[[], Any], times: int) -> list[float]:
    work()  # warm: connections, templates, the statement of this shape
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def get_ok(client: Client, url: str, **headers: str) -> Callable[[], Any]:
    def get() -> None:
        response = client.get(url, headers=headers)
        assert response.status_code == 200, (url, response.status_code)

    return get


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    report = report_opening(rounds=args.rounds, requests_per_round=args.requests)
    setup_test_environment()
    samples: dict[str, dict[str, list[float]]] = {"before": {}, "now": {}}
    with (
        tempfile.TemporaryDirectory(prefix="bench-reads-") as tmp,
        RedisServer(Path(tmp)) as redis_server,
        throwaway_database(BENCH_DB_SUFFIX),
        override_settings(API_RATE_LIMIT_PER_MINUTE=10**9),
    ):
        owner = User.objects.create_user("owner", password="x")  # noqa: S106 - a throwaway database
        workspace = Workspace.objects.create(name="Studio", slug="studio")
        Membership.objects.create(workspace=workspace, user=owner, role=Role.OWNER)
        token = token_create(user=owner, name="bench", scope="read", expires_in_days=None).raw
        browser = Client()
        browser.force_login(owner)
        bearer = {"Authorization": f"Bearer {token}"}
        api = Client()
        reads = {
            "API: GET a workspace": get_ok(api, "/api/v1/workspaces/studio", **bearer),
            "API: GET the workspace list": get_ok(api, "/api/v1/workspaces", **bearer),
            "dashboard page": get_ok(browser, reverse("workspace_dashboard", args=["studio"])),
            "the usage read alone": lambda: selectors.workspace_month_usage(workspace=workspace.pk),
        }
        for _ in range(args.rounds):
            for label, setup in (("before", as_before), ("now", as_now)):
                with setup(redis_server.url):
                    for name, work in reads.items():
                        samples[label].setdefault(name, []).extend(timed(work, args.requests))
    report["p50_ms"] = {
        name: {
            "before": round(statistics.median(samples["before"][name]), 2),
            "now": round(statistics.median(samples["now"][name]), 2),
        }
        for name in reads
    }
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
