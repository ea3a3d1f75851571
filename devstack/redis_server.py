"""A throwaway Redis server, and pointing this process at a Redis.

- `RedisServer`: redis-server on a free loopback port, without persistence (a restart loses every
  key, channel-layer group and queued message, as a crash would). `start()`/`stop()`/`restart()`,
  or a `with` block, which stops it at the end.
- `point_this_process_at(url)`: this process's Django settings (REDIS_URL, the Celery broker, the
  channel layers) and Celery's publisher use that Redis from now on; it returns what they used, for
  `point_this_process_back(...)`. `this_process_on(url)` does both around a `with` block.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from devstack.ports import free_port, port_open
from devstack.processes import READY_TIMEOUT, Process, niced, require_executable, wait_for_port


class RedisServer:
    """redis-server on a free port of 127.0.0.1, its files and log in `workdir` (`nice`: its CPU priority)."""

    def __init__(self, workdir: Path, *, nice: int = 0) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._nice = nice
        self._process: Process | None = None

    def start(self) -> None:
        """Start it and wait until it listens; `Missing` when redis-server is not installed."""
        if self._process is None:
            executable = require_executable("redis-server", "the Debian package redis-server")
            argv = [executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
            argv += ["--dir", str(self.workdir)]
            self._process = Process("redis", niced(self._nice, argv), dict(os.environ), self.workdir / "redis.log")
        self._process.start()
        wait_for_port(self._process, self.port)

    def stop(self) -> None:
        """Stop it, and wait until its port is closed (a restart then finds it free)."""
        if self._process is not None:
            if self._process.alive():
                self._shut_down_now()
            self._process.stop()
        deadline = time.monotonic() + READY_TIMEOUT
        while port_open("127.0.0.1", self.port) and time.monotonic() < deadline:
            time.sleep(0.05)

    def _shut_down_now(self) -> None:
        # Redis acts on SIGTERM at its next timer tick, a tenth of a second away at its default
        # rate, and a suite stops about two hundred of these; the SHUTDOWN command it acts on at once.
        # It keeps no files, so nothing is lost; if it cannot be asked, the signal still ends it.
        client = redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=1, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
        )
        with contextlib.suppress(redis.RedisError, OSError):
            client.shutdown(nosave=True)
        client.close()

    def restart(self, *, down_for: float = 0.0) -> None:
        self.stop()
        time.sleep(down_for)
        self.start()

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def point_celery_at(broker_url: str) -> None:
    """Publish to `broker_url` from now on. Celery keeps its pools of broker connections and
    producers, made with the address it had when it first published: they are dropped as
    after a fork, so the next publish connects to this one."""
    from config.celery import app

    app.conf.broker_url = broker_url  # type: ignore[misc]
    app._after_fork()  # type: ignore[attr-defined]  # Celery has no public way to drop its pools


def point_this_process_at(redis_url: str) -> dict[str, Any]:
    """Make this process enqueue, announce and publish to `redis_url`; returns what it used before."""
    from channels.layers import channel_layers
    from django.conf import settings

    from config.celery import app

    saved = {
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CHANNEL_LAYERS": settings.CHANNEL_LAYERS,
        "broker_url": app.conf.broker_url,
    }
    settings.REDIS_URL = redis_url
    settings.CELERY_BROKER_URL = redis_url
    layers: dict[str, dict[str, Any]] = settings.CHANNEL_LAYERS
    settings.CHANNEL_LAYERS = {
        alias: {**layer, "CONFIG": {**layer["CONFIG"], "hosts": [redis_url]}} for alias, layer in layers.items()
    }
    channel_layers.backends.clear()
    point_celery_at(redis_url)
    return saved


def point_this_process_back(saved: dict[str, Any]) -> None:
    """Undo `point_this_process_at`, given what it returned."""
    from channels.layers import channel_layers
    from django.conf import settings

    settings.REDIS_URL = saved["REDIS_URL"]
    settings.CELERY_BROKER_URL = saved["CELERY_BROKER_URL"]
    settings.CHANNEL_LAYERS = saved["CHANNEL_LAYERS"]
    channel_layers.backends.clear()
    point_celery_at(saved["broker_url"])


@contextmanager
def this_process_on(redis_url: str) -> Iterator[None]:
    """This process on `redis_url` for the block, then back on the Redis it used."""
    saved = point_this_process_at(redis_url)
    try:
        yield
    finally:
        point_this_process_back(saved)
