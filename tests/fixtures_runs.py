"""The real stack for run tests (and browser tests): a Celery worker, Celery
beat and a daphne ASGI server, as separate processes, against the pytest
test database (PostgreSQL) and a Redis server of their own (a redis-server
subprocess on a free port, which a test may stop and restart: `.redis`).

- `atelier_server` (session): starts the three processes once. Tests that use
  it need committed data: mark them `django_db(transaction=True)`.
  `.base_url` (http://127.0.0.1:PORT), `.ws_url(path)`, `.cookie_for(user)`,
  `.kill_worker()` (SIGKILL) and `.start_worker()`, `.media_root`.
- `run_stack`: the per-test view of it: points this process's media root at the
  server's, so artifacts the worker stored can be read here.

The processes get short heartbeat/reaper intervals so a killed worker's run
is reaped within seconds; everything else is the production configuration.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support import free_port, port_open, require

READY_TIMEOUT = 60.0
ROOT = Path(__file__).resolve().parent.parent

# Knobs for the test processes: fast reaping, fast polling; nothing that makes them less real.
PROCESS_ENV = {
    "RUN_HEARTBEAT_SECONDS": "1",
    "RUN_STALE_AFTER_SECONDS": "6",
    "RUN_REAPER_INTERVAL": "2",
    "RUN_WS_POLL_SECONDS": "2",
    # A run whose queue message was lost is enqueued again after 3 s (ended only after 5 min).
    "RUN_QUEUED_REQUEUE_AFTER_SECONDS": "3",
    "RUN_QUEUED_MAX_SECONDS": "300",
    # The periodic sandbox janitor would also sweep other tests' sandboxes; the reaper covers runs.
    "SANDBOX_JANITOR_INTERVAL": "86400",
    "SANDBOX_POOL_SIZE": "0",
    # A stored event that drifts from its schema fails the run (and so the test).
    "RUN_EVENT_SCHEMA_STRICT": "true",
    "PYTHONUNBUFFERED": "1",
}


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


@dataclass
class _Process:
    name: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.popen = subprocess.Popen(
            self.argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            assert self.popen is not None
            os.killpg(self.popen.pid, sig)

    def stop(self, timeout: float = 15) -> None:
        if self.popen is None:
            return
        self.signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.popen.wait(timeout=10)
        self.popen = None

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class RedisServer:
    """A throwaway redis-server on a free port, without persistence: a restart
    loses every key, channel-layer group and queued message, as a crash would."""

    def __init__(self, workdir: Path, *, nice: int = 0) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process = _Process(
            "redis",
            [
                *(["nice", "-n", str(nice)] if nice else []),
                shutil.which("redis-server") or "redis-server",
                *("--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
                *("--dir", str(workdir)),
            ],
            dict(os.environ),
            workdir / "redis.log",
        )

    def start(self) -> None:
        self._process.start()
        _wait_for_port(self._process, self.port)

    def stop(self) -> None:
        self._process.stop()
        deadline = time.monotonic() + READY_TIMEOUT
        while port_open("127.0.0.1", self.port) and time.monotonic() < deadline:
            time.sleep(0.05)

    def restart(self, *, down_for: float = 0.0) -> None:
        self.stop()
        time.sleep(down_for)
        self.start()


@dataclass
class AtelierServer:
    base_url: str
    port: int
    media_root: Path
    redis_url: str
    processes: dict[str, _Process] = field(default_factory=dict)
    redis: RedisServer | None = None

    def ws_url(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

    @property
    def origin(self) -> str:
        return self.base_url

    def cookie_for(self, user: Any) -> str:
        """A `Cookie` header value for a signed-in session of `user` (stored in the test database)."""
        from django.test import Client

        client = Client()
        client.force_login(user)
        return f"sessionid={client.cookies['sessionid'].value}"

    # --- the worker -------------------------------------------------------

    @property
    def worker(self) -> _Process:
        return self.processes["worker"]

    def kill_worker(self) -> None:
        """SIGKILL the worker and all its children, as a crash would."""
        self.worker.signal(signal.SIGKILL)
        assert self.worker.popen is not None
        self.worker.popen.wait(timeout=10)
        self.worker.popen = None

    def start_worker(self) -> None:
        marker = self.worker.log_path.stat().st_size if self.worker.log_path.exists() else 0
        self.worker.start()
        _wait_for_log(self.worker, "ready.", after=marker)

    def ensure_worker(self) -> None:
        if not self.worker.alive():
            self.start_worker()

    def logs(self) -> str:
        return "\n".join(f"--- {name} ---\n{proc.log_tail()}" for name, proc in self.processes.items())


def _wait_for_log(proc: _Process, text: str, *, after: int = 0) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited while starting:\n{proc.log_tail()}")
        try:
            with proc.log_path.open("rb") as handle:
                handle.seek(after)
                if text.encode() in handle.read():
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{proc.name} did not become ready:\n{proc.log_tail()}")


def _wait_for_port(proc: _Process, port: int) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited while starting:\n{proc.log_tail()}")
        if port_open("127.0.0.1", port):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{proc.name} did not listen on {port}:\n{proc.log_tail()}")


def _point_this_process_at(redis_url: str) -> dict[str, Any]:
    """Make this (the test) process enqueue, announce and publish to the test Redis."""
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
    app.conf["broker_url"] = redis_url
    return saved


def _restore(saved: dict[str, Any]) -> None:
    from channels.layers import channel_layers
    from django.conf import settings

    from config.celery import app

    settings.REDIS_URL = saved["REDIS_URL"]
    settings.CELERY_BROKER_URL = saved["CELERY_BROKER_URL"]
    settings.CHANNEL_LAYERS = saved["CHANNEL_LAYERS"]
    channel_layers.backends.clear()
    app.conf["broker_url"] = saved["broker_url"]


@pytest.fixture(scope="session")
def atelier_server(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AtelierServer]:
    from django.db import connection

    require(connection.vendor == "postgresql", "PostgreSQL (set DATABASE_URL, as `make pytest` does)")
    require(shutil.which("redis-server") is not None, "redis-server (the Debian package redis-server)")
    base = tmp_path_factory.mktemp("atelier-server")
    redis_server = RedisServer(base)
    redis_url = redis_server.url

    db = connection.settings_dict
    database_url = (
        f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    )
    media_root, static_root = base / "media", base / "static"
    media_root.mkdir()
    env = {
        **os.environ,
        **PROCESS_ENV,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": redis_url,
        "MEDIA_ROOT": str(media_root),
        "STATIC_ROOT": str(static_root),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    # The platform at localhost, artifacts on their own origin at 127.0.0.1.
    env["SITE_URL"], env["ARTIFACT_ORIGIN"] = f"http://localhost:{port}", f"http://127.0.0.1:{port}"
    server = AtelierServer(
        base_url=f"http://127.0.0.1:{port}", port=port, media_root=media_root, redis_url=redis_url, redis=redis_server
    )
    celery = [_bin("celery"), "-A", "config"]
    server.processes = {
        "web": _Process(
            "web",
            [_bin("daphne"), "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
            env,
            base / "web.log",
        ),
        "worker": _Process(
            "worker",
            [
                *celery,
                "worker",
                "--pool",
                "threads",
                "--concurrency",
                os.environ.get("ATELIER_TEST_WORKER_CONCURRENCY", "12"),
                "--loglevel",
                "INFO",
                "--hostname",
                "runs-test@%h",
                "--without-gossip",
                "--without-mingle",
            ],
            env,
            base / "worker.log",
        ),
        "beat": _Process(
            "beat",
            [*celery, "beat", "--loglevel", "INFO", "--schedule", str(base / "beat-schedule")],
            env,
            base / "beat.log",
        ),
    }
    saved = _point_this_process_at(redis_url)
    try:
        redis_server.start()
        for proc in server.processes.values():
            proc.start()
        _wait_for_port(server.processes["web"], port)
        _wait_for_log(server.worker, "ready.")
        yield server
    finally:
        for proc in server.processes.values():
            proc.stop()
        redis_server.stop()
        _restore(saved)
        # pytest-django drops the test database next; our processes must have let go of it.
        with django_db_blocker.unblock():
            connection.close()


@pytest.fixture
def run_stack(atelier_server: AtelierServer, settings: Any) -> AtelierServer:
    """The running stack, with this process reading the same media files and a live worker."""
    settings.MEDIA_ROOT = atelier_server.media_root
    atelier_server.ensure_worker()
    return atelier_server
