"""/healthz tells an operator which component is down."""

import logging
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from tests.support import free_port
from tests.support.fixtures.redis import point_celery_at

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
