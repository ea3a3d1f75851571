"""/healthz tells an operator which component is down."""

import logging
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from devstack.redis_server import point_celery_at
from sandboxes.host_presence import WorkerClaim, claim_alive, withdraw
from tests.support import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def point_at(settings: Any) -> Iterator[Callable[[str], None]]:
    """Point the platform's Redis and Celery broker somewhere for one test; the broker is put back
    after (Django's `settings` fixture puts REDIS_URL back)."""
    from config.celery import app

    broker = app.conf.broker_url

    def point(redis_url: str) -> None:
        settings.REDIS_URL = redis_url
        point_celery_at(redis_url)

    yield point
    point_celery_at(broker)


def test_healthz_reports_every_component_ok(client: Client, point_at: Callable[[str], None], own_redis: str) -> None:
    point_at(own_redis)
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert set(body["components"]) == {"database", "redis", "celery_broker"}
    assert body["workers"]["ok"] is False  # none runs in this test; reported, not this instance's health
    assert all(c["ok"] for c in body["components"].values())


def test_healthz_is_not_ok_when_redis_is_stopped(
    client: Client, point_at: Callable[[str], None], own_redis: str
) -> None:
    point_at(own_redis)
    assert client.get("/healthz").status_code == 200
    port = int(own_redis.rsplit(":", 1)[1].split("/")[0])
    subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], check=False, capture_output=True)
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["ok"] is False
    assert body["components"]["redis"]["ok"] is False
    assert body["components"]["celery_broker"]["ok"] is False
    assert body["components"]["database"]["ok"] is True
    assert "error" in body["components"]["redis"]


def test_healthz_names_what_is_down_but_keeps_the_reason_in_the_log(
    client: Client, point_at: Callable[[str], None], caplog: pytest.LogCaptureFixture
) -> None:
    closed = free_port()  # nothing listens there
    point_at(f"redis://127.0.0.1:{closed}/0")
    with caplog.at_level(logging.WARNING, logger="config.health"):
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["components"]["redis"]["ok"] is False
    assert body["components"]["database"]["ok"] is True
    text = response.content.decode()
    for detail in (str(closed), "127.0.0.1", "localhost", "Connection", "Error", "refused"):
        assert detail not in text
    logged = "\n".join(record.getMessage() + str(record.exc_info and record.exc_info[1]) for record in caplog.records)
    assert "redis is down" in logged
    assert str(closed) in logged  # the operator still finds the reason in the server log


def _claim(host_id: str, *, engine_ok: bool = True, worker: str = "w@test:1") -> None:
    problem = "" if engine_ok else "the engine has no runsc runtime"
    claim_alive(WorkerClaim(host_id=host_id, worker=worker, engine_ok=engine_ok, problem=problem, seen_at=time.time()))


def test_with_no_worker_alive_the_platform_says_no_creation_could_start(
    client: Client, platform_on_own_redis: str
) -> None:
    response = client.get("/healthz/workers")
    assert response.status_code == 503
    assert response.json() == {"ok": False, "hosts_alive": 0, "hosts_with_working_engine": 0}
    # This instance itself is healthy: /healthz stays 200 and reports the workers beside.
    health = client.get("/healthz")
    assert health.status_code == 200
    assert health.json()["workers"] == {"ok": False, "hosts_alive": 0, "hosts_with_working_engine": 0}


def test_a_host_whose_engine_works_makes_the_workers_ready(client: Client, platform_on_own_redis: str) -> None:
    _claim("host-a", engine_ok=False)
    response = client.get("/healthz/workers")
    assert (response.status_code, response.json()["hosts_alive"]) == (503, 1)
    _claim("host-b", worker="w@b:1")
    _claim("host-b", worker="w@b:2")  # two workers on one host count as one host
    response = client.get("/healthz/workers")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "hosts_alive": 2, "hosts_with_working_engine": 1}
    assert "host-a" not in response.content.decode()  # counts only: anyone may ask


def test_a_worker_that_stops_saying_it_is_alive_drops_out(
    client: Client, platform_on_own_redis: str, settings: Any
) -> None:
    settings.SANDBOX_HOST_BEAT_SECONDS = 0.5  # a claim lasts 3 beats, rounded up to 2 s
    _claim("host-a")
    assert client.get("/healthz/workers").status_code == 200
    time.sleep(2.5)
    assert client.get("/healthz/workers").status_code == 503


def test_a_worker_stopping_cleanly_withdraws_at_once(client: Client, platform_on_own_redis: str) -> None:
    _claim("host-a", worker="w@a:1")
    withdraw(host_id="host-a", worker="w@a:1")
    assert client.get("/healthz/workers").status_code == 503


def test_workers_are_unknown_not_a_crash_when_redis_is_away(
    client: Client, point_at: Callable[[str], None]
) -> None:
    point_at(f"redis://127.0.0.1:{free_port()}/0")
    response = client.get("/healthz/workers")
    assert response.status_code == 503
    assert response.json()["ok"] is False
    assert "Redis" in response.json()["error"]
