"""The platform's own processes as a stack, for tests and benchmarks: daphne (the web app and the
artifact origin), Celery workers and Celery beat, each a process of its own, on a PostgreSQL
database and a Redis given to them.

- `PROCESS_ENV` and `stack_env()`: the one environment every process of a stack gets: this
  process's, the production configuration but for a few knobs that make problems show in seconds
  (`PROCESS_ENV`), and where its database, Redis and media are. `origins_env()`: the platform's and
  the artifacts' origins for a daphne on a port.
- `web_process()`, `worker_process()`, `beat_process()`: one program each, to start (`Process`).
- `stack_running(base, database_url=...)`: the whole stack — a Redis of its own, daphne, a worker
  and beat — started with its files in `base` (the static files, `collected_static()`, once per
  process for all its stacks), this process enqueueing to its Redis meanwhile.
  When the block ends every process is stopped (SIGTERM, then SIGKILL), then the Redis, and this
  process is pointed back at the Redis it used.
- `AtelierServer`: a running stack: its addresses, a signed-in session's cookie, and its workers
  (killed, started again, more of them as on other worker hosts).
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devstack.ports import free_port
from devstack.processes import ROOT, Process, niced, venv_executable, wait_for_log, wait_for_port
from devstack.redis_server import RedisServer, this_process_on
from sandboxes.per_process import per_process

# Knobs for a stack's processes: fast reaping, fast polling; nothing that makes them less real.
PROCESS_ENV = {
    "RUN_HEARTBEAT_SECONDS": "1",
    "RUN_STALE_AFTER_SECONDS": "6",
    "RUN_REAPER_INTERVAL": "2",
    "RUN_WS_POLL_SECONDS": "2",
    "NOTIFICATION_BELL_POLL_SECONDS": "2",
    "RUN_WS_ACCESS_RECHECK_SECONDS": "1",
    # Small enough that the limit tests reach them with a handful of sockets.
    "RUN_WS_MAX_PER_USER": "4",
    "RUN_WS_MAX_PER_ADDRESS": "12",
    # A run that could start but whose wake-up was lost gets another after 3 s (ended only after 5 min).
    "RUN_QUEUED_REQUEUE_AFTER_SECONDS": "3",
    "RUN_QUEUED_MAX_SECONDS": "300",
    # A worker's claim that its host is alive lasts 3 beats: a killed host drops out in seconds.
    "SANDBOX_HOST_BEAT_SECONDS": "1",
    "SANDBOX_POOL_SIZE": "0",
    # A stored event that drifts from its schema fails the run (and so the test).
    "RUN_EVENT_SCHEMA_STRICT": "true",
    "PYTHONUNBUFFERED": "1",
}
SETTINGS_MODULE = "config.test_settings"
WORKER_READY = "ready."  # what a Celery worker logs once it takes tasks


def stack_env(
    *, database_url: str, media_root: Path, redis_url: str | None = None, overrides: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a stack's processes: this process's, PROCESS_ENV, the test settings, the
    database, the Redis (the Celery broker too; None: the settings' default) and the media root,
    then `overrides` (another storage, a host id, a benchmark's own knobs)."""
    env = {
        **os.environ,
        **PROCESS_ENV,
        "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE,
        "DATABASE_URL": database_url,
        "MEDIA_ROOT": str(media_root),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    if redis_url is not None:
        env.update({"REDIS_URL": redis_url, "CELERY_BROKER_URL": redis_url})
    env.update(overrides or {})
    return env


def origins_env(port: int) -> dict[str, str]:
    """The platform at http://localhost:PORT and the artifacts on their own origin at
    http://127.0.0.1:PORT: one daphne under two host names, as in development."""
    return {"SITE_URL": f"http://localhost:{port}", "ARTIFACT_ORIGIN": f"http://127.0.0.1:{port}"}


def web_process(port: int, env: dict[str, str], log_dir: Path, *, name: str = "web", nice: int = 0) -> Process:
    """daphne serving the platform on 127.0.0.1:`port`; ready once it listens (`wait_for_port`)."""
    argv = [venv_executable("daphne"), "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"]
    return Process(name, niced(nice, argv), env, log_dir / f"{name}.log")


def worker_process(
    env: dict[str, str], log_dir: Path, *, name: str = "worker", threads: int | None = None, nice: int = 0
) -> Process:
    """A Celery worker called `name@<host>`, with `threads` threads (None: as deployed,
    WORKER_CONCURRENCY's default); ready once it logs WORKER_READY (`AtelierServer.start_worker`)."""
    argv = [venv_executable("celery"), "-A", "config", "worker", "--pool", "threads"]
    argv += ["--concurrency", str(threads)] if threads else []
    argv += ["--loglevel", "INFO", "--hostname", f"{name}@%h", "--without-gossip", "--without-mingle"]
    return Process(name, niced(nice, argv), env, log_dir / f"{name}.log")


def beat_process(env: dict[str, str], log_dir: Path) -> Process:
    """Celery beat, its schedule file in `log_dir`."""
    argv = [venv_executable("celery"), "-A", "config", "beat", "--loglevel", "INFO"]
    argv += ["--schedule", str(log_dir / "beat-schedule")]
    return Process("beat", argv, env, log_dir / "beat.log")


def start_worker_process(worker: Process) -> None:
    """Start a Celery worker and return once it takes tasks (its log says so past where it ended)."""
    logged_before = worker.log_size()
    worker.start()
    wait_for_log(worker, WORKER_READY, after=logged_before)


@dataclass
class AtelierServer:
    """A running stack: `processes` by name ("web", "worker", "beat", and workers added since)."""

    base_url: str
    port: int
    media_root: Path
    redis_url: str
    host_id: str = ""  # the workers' SANDBOX_HOST_ID; empty: the machine's host name (the default)
    processes: dict[str, Process] = field(default_factory=dict)
    redis: RedisServer | None = None

    def ws_url(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

    @property
    def origin(self) -> str:
        return self.base_url

    def start(self) -> None:
        """Start every process; return once daphne listens and the worker takes tasks."""
        for proc in self.processes.values():
            proc.start()
        wait_for_port(self.processes["web"], self.port)
        wait_for_log(self.worker, WORKER_READY)

    def stop(self) -> None:
        """Stop every process (SIGTERM, then SIGKILL), the Redis left alone."""
        for proc in self.processes.values():
            proc.stop()

    def cookie_for(self, user: Any) -> str:
        """A `Cookie` header value for a signed-in session of `user` (stored in the stack's database)."""
        from django.test import Client

        client = Client()
        client.force_login(user)
        return f"sessionid={client.cookies['sessionid'].value}"

    # --- the workers ------------------------------------------------------

    @property
    def worker(self) -> Process:
        return self.processes["worker"]

    def kill_worker(self, name: str = "worker") -> None:
        """SIGKILL a worker and all its children, as a crash would."""
        self.processes[name].kill()

    def start_worker(self, name: str = "worker") -> None:
        """Start a worker of the stack and wait until it takes tasks."""
        start_worker_process(self.processes[name])

    def replace_worker(self, worker: Process) -> None:
        """`worker` in place of the stack's worker of its name (stopped first, if there is one), started."""
        previous = self.processes.get(worker.name)
        if previous is not None:
            previous.stop()
        self.processes[worker.name] = worker
        self.start_worker(worker.name)

    def add_worker(self, name: str, *, host_id: str, env: dict[str, str], threads: int) -> Process:
        """Start another worker, as on another worker host: SANDBOX_HOST_ID `host_id`,
        and `env` on top of the stack's (its engine's DOCKER_HOST and sandbox network)."""
        env = {**self.worker.env, **env, "SANDBOX_HOST_ID": host_id}
        worker = worker_process(env, self.worker.log_path.parent, name=name, threads=threads)
        self.replace_worker(worker)
        return worker

    def remove_worker(self, name: str) -> None:
        self.processes.pop(name).stop()

    @contextmanager
    def worker_with_threads(self, threads: int) -> Iterator[None]:
        """The worker restarted with `threads` threads meanwhile, then as it was."""
        usual = self.worker
        self.replace_worker(worker_process(usual.env, usual.log_path.parent, name=usual.name, threads=threads))
        try:
            yield
        finally:
            self.replace_worker(usual)

    def ensure_worker(self) -> None:
        if not self.worker.alive():
            self.start_worker()

    def logs(self) -> str:
        return "\n".join(f"--- {name} ---\n{proc.log_tail()}" for name, proc in self.processes.items())


def collect_static(root: Path) -> None:
    """The platform's static files, collected into `root` as a stack's daphne serves them."""
    collectstatic = [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"]
    env = {**os.environ, **PROCESS_ENV, "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE, "STATIC_ROOT": str(root)}
    subprocess.run(collectstatic, cwd=ROOT, env=env, check=True)


@per_process
def collected_static() -> Path:
    """The static files, collected once per process into a folder removed when it exits: they are
    the checkout's, the same for every stack, and collecting them costs a Django start and about
    four CPU-seconds, which a test session paid for each of its stacks."""
    root = Path(tempfile.mkdtemp(prefix="atelier-static-"))
    atexit.register(shutil.rmtree, root, True)
    collect_static(root)
    return root


@contextmanager
def stack_running(
    base: Path, *, database_url: str, env_overrides: Mapping[str, str] | None = None, worker_threads: int = 12
) -> Iterator[AtelierServer]:
    """daphne, a worker of `worker_threads` threads and beat, on `database_url` and a Redis of their
    own, with `env_overrides` on top of `stack_env` (another storage, say); their logs and media in
    `base`, and the static files this process collected. This process enqueues to their Redis
    meanwhile. `Missing` when redis-server is not installed."""
    redis_server = RedisServer(base)
    media_root = base / "media"
    media_root.mkdir()
    port = free_port()
    host_id = f"stack-{secrets.token_hex(4)}"  # its janitor sweeps only this stack's sandboxes
    overrides = {"SANDBOX_HOST_ID": host_id, **(env_overrides or {})}
    overrides.setdefault("STATIC_ROOT", str(collected_static()))
    env = stack_env(
        database_url=database_url,
        media_root=media_root,
        redis_url=redis_server.url,
        overrides={**overrides, **origins_env(port)},
    )
    server = AtelierServer(
        base_url=f"http://127.0.0.1:{port}",
        port=port,
        media_root=media_root,
        redis_url=redis_server.url,
        host_id=host_id,
        redis=redis_server,
        processes={
            "web": web_process(port, env, base),
            "worker": worker_process(env, base, threads=worker_threads),
            "beat": beat_process(env, base),
        },
    )
    with redis_server, this_process_on(redis_server.url):
        try:
            server.start()
            yield server
        finally:
            server.stop()
