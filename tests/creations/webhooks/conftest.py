"""Webhook tests: receivers on loopback are allowed (each refusal test turns that off), and a Celery
worker in this process, on a Redis of the test's own, for deliveries retried as in production."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _receivers_on_loopback(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = True


@pytest.fixture
def celery_worker_here(
    platform_on_own_redis: str, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], AbstractContextManager[None]]:
    """A real Celery worker (threads pool) consuming the test's Redis from this process: its
    retries wait on the broker's countdowns as a deployed worker's do. It delivers webhooks
    only, so it keeps no sandbox host (no Docker engine is asked) and fills no sandbox pool."""
    from celery.contrib.testing.worker import start_worker

    settings.SANDBOX_POOL_SIZE = 0
    monkeypatch.setattr("sandboxes.host_keeper.start_keeping", lambda **kwargs: None)
    monkeypatch.setattr("sandboxes.host_keeper.stop_keeping", lambda: None)
    monkeypatch.setattr("sandboxes.cpu_priority.prepare_at_worker_start", lambda setting, tier: None)

    import creations.webhooks.tasks  # noqa: F401 - registers the task with the app
    from config.celery import app

    @contextmanager
    def running() -> Iterator[None]:
        with start_worker(app, pool="threads", concurrency=2, perform_ping_check=False, shutdown_timeout=10):
            yield

    return running
