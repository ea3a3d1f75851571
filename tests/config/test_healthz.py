"""/healthz tells an operator which component is down."""

import logging
import subprocess

import pytest
from django.test import Client

from tests.support import free_port

pytestmark = pytest.mark.django_db


def test_healthz_reports_every_component_ok(client: Client, settings: object, own_redis: str) -> None:
    _point_at(settings, own_redis)
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert set(body["components"]) == {"database", "redis", "celery_broker"}
    assert all(c["ok"] for c in body["components"].values())


def test_healthz_is_not_ok_when_redis_is_stopped(client: Client, settings: object, own_redis: str) -> None:
    _point_at(settings, own_redis)
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
    client: Client, settings: object, caplog: pytest.LogCaptureFixture
) -> None:
    closed = free_port()  # nothing listens there
    _point_at(settings, f"redis://127.0.0.1:{closed}/0")
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


def _point_at(settings: object, redis_url: str) -> None:
    from config.celery import app

    settings.REDIS_URL = redis_url  # type: ignore[attr-defined]
    app.conf.broker_url = redis_url  # type: ignore[misc]
