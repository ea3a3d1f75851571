"""Sandbox providers: cold start, or a warm pool of pre-started sandboxes.

The pool lives in the worker process: members are started in a background
thread, handed out on `acquire` (renamed to carry the run id, because Docker
labels cannot change after creation) and replaced. Members older than
SANDBOX_POOL_MAX_AGE are recycled; the janitor removes members whose process
died. A released sandbox is always removed, never reused: a run leaves state.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping

from django.conf import settings

from sandboxes.container_spec import LABEL_POOL, LABEL_RUN_ID
from sandboxes.docker_runtime import NAME_PREFIX, DockerSandbox, start_sandbox
from sandboxes.per_process import per_process
from sandboxes.runtime import Sandbox, SandboxProvider

logger = logging.getLogger(__name__)

POOL_NAME_PREFIX = f"{NAME_PREFIX}pool-"
RUN_NAME_PREFIX = f"{NAME_PREFIX}run-"
POOL_OWNER_LABEL = "atelier.pool_owner"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")

SandboxStarter = Callable[..., DockerSandbox]


def run_container_name(run_id: str | None) -> str:
    suffix = secrets.token_hex(4)
    if run_id and _SAFE_NAME.match(run_id):
        return f"{RUN_NAME_PREFIX}{run_id}-{suffix}"
    return f"{RUN_NAME_PREFIX}unknown-{suffix}"


def _as_docker(sandbox: Sandbox) -> DockerSandbox:
    if not isinstance(sandbox, DockerSandbox):
        raise TypeError(f"not a sandbox of this provider: {sandbox!r}")
    return sandbox


class ColdStartProvider:
    """A fresh container per acquire."""

    def __init__(self, start: SandboxStarter = start_sandbox) -> None:
        self._start = start

    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        return self._start(labels, name=run_container_name(labels.get(LABEL_RUN_ID)))

    def release(self, sandbox: Sandbox) -> None:
        sandbox.stop()


class WarmPool:
    """Keeps `size` started sandboxes ready; hands them out and replaces them."""

    def __init__(self, size: int, *, max_age: float, start: SandboxStarter = start_sandbox) -> None:
        self.size = size
        self.max_age = max_age
        self._start = start
        self._ready: deque[DockerSandbox] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._owner = f"{settings.SANDBOX_HOST_ID}:{os.getpid()}"
        self._thread = threading.Thread(target=self._fill_forever, name="sandbox-pool", daemon=True)
        self._thread.start()
        self._wake.set()

    @property
    def ready_count(self) -> int:
        with self._lock:
            return len(self._ready)

    def wait_until_full(self, timeout: float = 120) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ready_count >= self.size:
                return True
            time.sleep(0.05)
        return False

    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        while True:
            with self._lock:
                member = self._ready.popleft() if self._ready else None
            self._wake.set()  # start a replacement
            if member is None:
                return ColdStartProvider(self._start).acquire(labels=labels)
            if time.time() - member.started_at > self.max_age or not member.is_running():
                member.stop()
                continue
            try:
                member.rename(run_container_name(labels.get(LABEL_RUN_ID)))
            except Exception:
                member.stop()
                continue
            member.labels.update(labels)
            return member

    def release(self, sandbox: Sandbox) -> None:
        sandbox.stop()

    def shutdown(self) -> None:
        self._closed = True
        self._wake.set()
        with self._lock:
            members = list(self._ready)
            self._ready.clear()
        for member in members:
            member.stop()

    def _fill_forever(self) -> None:
        while not self._closed:
            self._wake.wait(timeout=30)
            self._wake.clear()
            self._recycle_old()
            while not self._closed and self.ready_count < self.size:
                try:
                    member = self._start(
                        {LABEL_POOL: "1", POOL_OWNER_LABEL: self._owner},
                        name=f"{POOL_NAME_PREFIX}{secrets.token_hex(6)}",
                    )
                except Exception:
                    logger.exception("could not start a pool sandbox; retrying later")
                    break
                with self._lock:
                    if self._closed:
                        member.stop()
                        return
                    self._ready.append(member)

    def _recycle_old(self) -> None:
        with self._lock:
            old = [m for m in self._ready if time.time() - m.started_at > self.max_age]
            for member in old:
                self._ready.remove(member)
        for member in old:
            member.stop()


@per_process
def get_provider() -> SandboxProvider:
    """The process's provider: a warm pool when SANDBOX_POOL_SIZE > 0, else cold start."""
    if settings.SANDBOX_POOL_SIZE > 0:
        pool = WarmPool(settings.SANDBOX_POOL_SIZE, max_age=settings.SANDBOX_POOL_MAX_AGE)
        atexit.register(pool.shutdown)
        return pool
    return ColdStartProvider()
