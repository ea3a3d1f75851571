"""Watching runs from the side while their agents work: heartbeat and cancel.

One watcher thread per worker process serves all the runs of that process
(one database connection, one Redis subscription, whatever the number of
runs), and ends when the process has none left. It beats the heartbeats of
all its runs in one UPDATE (so the reaper knows the worker is alive), hears
cancels on Redis pub/sub (instant) and checks the database as a fallback
(Redis may be down), and notices when a run was ended by someone else (the
reaper). Either way it sets the run's `stop`, which the agent loop watches.
An agent that has not stopped within a short grace has its sandbox stopped,
so a cancelled run never lingers; once it has stopped, what it made is copied
out, bounded by the copy's own limits, not by the grace, which a loaded
machine could spend before the copy ends.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

import redis
from django.conf import settings
from django.db import connection

from creations.models import ACTIVE_STATUSES, Run
from creations.runs.state import runs_beat
from sandboxes.per_process import per_process

log = logging.getLogger(__name__)

CANCEL_CHANNEL_PREFIX = "atelier:run-cancel:"
RESUBSCRIBE_SECONDS = 5.0  # after Redis went away
# The longest the watcher waits between looks at its runs, whatever its clocks: how soon it ends
# after the last run, and so how soon the next run gets a watcher that keeps the current clocks.
IDLE_CHECK_SECONDS = 1.0


def cancel_channel(run_id: int) -> str:
    return f"{CANCEL_CHANNEL_PREFIX}{run_id}"


def publish_cancel(run_id: int) -> None:
    """Tell the worker at once; if Redis is down the worker's database poll still sees it."""
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
        try:
            client.publish(cancel_channel(run_id), b"cancel")
        finally:
            client.close()
    except redis.RedisError as error:
        log.warning("Could not publish the cancel of run %s (the worker polls the database too): %s", run_id, error)


class RunSupervisor:
    """Heartbeat + cancel watch of one run, served by this process's watcher."""

    def __init__(self, run_id: int, *, on_stop_sandbox: Callable[[], None]) -> None:
        self.run_id = run_id
        self.stop = threading.Event()  # handed to the agent as its cancel flag
        self.cancelled = False  # someone asked to cancel
        self.lost = False  # the run was ended elsewhere (reaped)
        self._on_stop_sandbox = on_stop_sandbox
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._agent_stopped = False
        self._grace_timer: threading.Timer | None = None

    def start(self) -> None:
        _watcher().add(self)

    def close(self) -> None:
        self._done.set()
        _watcher().remove(self)
        self._disarm()

    def agent_stopped(self) -> None:
        """The agent has stopped: a cancel no longer stops the sandbox, so its output can be copied."""
        with self._lock:
            self._agent_stopped = True
            if self.lost:  # its sandbox is being stopped, and nothing of it is kept
                return
        self._disarm()

    def trigger(self, *, lost: bool) -> None:
        with self._lock:
            if self.stop.is_set() or self._done.is_set():
                return
            self.lost, self.cancelled = lost, not lost
            self.stop.set()
            if self._agent_stopped and not lost:
                return
            # A run ended elsewhere keeps nothing of this worker's: its sandbox stops at once.
            grace = 0.0 if lost else settings.RUN_CANCEL_GRACE_SECONDS
            self._grace_timer = threading.Timer(grace, self._stop_sandbox)
            self._grace_timer.daemon = True
            self._grace_timer.start()

    def _disarm(self) -> None:
        with self._lock:
            timer, self._grace_timer = self._grace_timer, None
        if timer is not None:
            timer.cancel()

    def _stop_sandbox(self) -> None:
        if not self._done.is_set():
            try:
                self._on_stop_sandbox()
            except Exception:
                log.exception("Could not stop the sandbox of run %s", self.run_id)


class _Watcher:
    """The one thread of this process that watches all its runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[int, RunSupervisor] = {}
        self._thread: threading.Thread | None = None

    def add(self, supervisor: RunSupervisor) -> None:
        with self._lock:
            self._runs[supervisor.run_id] = supervisor
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._watch_while_runs, name="run-watcher", daemon=True)
                self._thread.start()

    def remove(self, supervisor: RunSupervisor) -> None:
        with self._lock:
            if self._runs.get(supervisor.run_id) is supervisor:
                del self._runs[supervisor.run_id]

    def _snapshot(self) -> dict[int, RunSupervisor]:
        with self._lock:
            return dict(self._runs)

    def _retire_if_idle(self) -> bool:
        """With no run left the thread ends, and add() starts another for the next run: a process
        without runs holds no database connection or Redis subscription, and goes on retrying neither
        while those services are away (a worker being shut down, say)."""
        with self._lock:
            if self._runs:
                return False
            self._thread = None
            return True

    def _watch_while_runs(self) -> None:
        pubsub: redis.client.PubSub | None = None
        next_beat = next_poll = next_subscribe = time.monotonic()
        while not self._retire_if_idle():
            now = time.monotonic()
            try:
                if now >= next_beat:
                    next_beat = now + settings.RUN_HEARTBEAT_SECONDS
                    self._beat()
                if now >= next_poll:
                    next_poll = now + settings.RUN_CANCEL_POLL_SECONDS
                    self._poll()
            except Exception:  # the database is away for a moment: the next round retries
                log.exception("Run watcher: the database check failed")
                with contextlib.suppress(Exception):
                    connection.close()
            if pubsub is None and now >= next_subscribe:
                pubsub = _subscribe()
                next_subscribe = now + RESUBSCRIBE_SECONDS
            wait = max(0.0, min(next_beat, next_poll, now + IDLE_CHECK_SECONDS) - time.monotonic())
            if pubsub is None:
                time.sleep(wait)
                continue
            try:
                message = pubsub.get_message(ignore_subscribe_messages=True, timeout=wait)
            except (redis.RedisError, OSError) as error:
                log.warning("Run watcher: cancel notifications fall back to polling for now: %s", error)
                with contextlib.suppress(Exception):
                    pubsub.close()
                pubsub = None
                continue
            if message is not None and message.get("type") == "pmessage":
                self._on_cancel_message(message.get("channel"))
        if pubsub is not None:
            with contextlib.suppress(Exception):
                pubsub.close()
        connection.close()

    def _beat(self) -> None:
        runs = self._snapshot()
        if not runs:
            return
        alive = runs_beat(run_ids=list(runs))
        for run_id, supervisor in runs.items():
            if run_id not in alive:
                supervisor.trigger(lost=True)

    def _poll(self) -> None:
        runs = self._snapshot()
        if not runs:
            return
        rows = Run.objects.filter(pk__in=runs).values_list("pk", "status", "cancel_requested_at")
        state = {pk: (status, cancel_at) for pk, status, cancel_at in rows}
        for run_id, supervisor in runs.items():
            status, cancel_at = state.get(run_id, (None, None))
            if status not in ACTIVE_STATUSES:
                supervisor.trigger(lost=True)  # ended elsewhere, or gone
            elif cancel_at is not None:
                supervisor.trigger(lost=False)

    def _on_cancel_message(self, channel: bytes | str | None) -> None:
        name = channel.decode() if isinstance(channel, bytes) else str(channel or "")
        try:
            run_id = int(name.removeprefix(CANCEL_CHANNEL_PREFIX))
        except ValueError:
            return
        supervisor = self._snapshot().get(run_id)
        if supervisor is not None:
            supervisor.trigger(lost=False)


def _subscribe() -> redis.client.PubSub | None:
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=2)
        pubsub = client.pubsub()
        pubsub.psubscribe(f"{CANCEL_CHANNEL_PREFIX}*")
        return pubsub
    except (redis.RedisError, OSError) as error:
        log.warning("Run watcher: cancel notifications fall back to polling for now: %s", error)
        return None


@per_process
def _watcher() -> _Watcher:
    """This process's watcher: a forked child (Celery prefork) watches its own runs with its own thread."""
    return _Watcher()
