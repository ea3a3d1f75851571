"""Watching a run from the side while the agent works: heartbeat and cancel.

One thread per run. It beats the run's heartbeat (so the reaper knows the
worker is alive), listens for a cancel on Redis pub/sub (instant) and checks
the database as a fallback (Redis may be down), and notices when the run was
ended by someone else (the reaper). Either way it sets `stop`, which the agent
loop watches, and after a short grace (for copying out what was made so far)
stops the sandbox itself so a cancelled run never lingers.
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
from creations.transitions import run_heartbeat

log = logging.getLogger(__name__)


def cancel_channel(run_id: int) -> str:
    return f"atelier:run-cancel:{run_id}"


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
    """Heartbeat + cancel watcher for one run (see the module docstring)."""

    def __init__(self, run_id: int, *, on_stop_sandbox: Callable[[], None]) -> None:
        self.run_id = run_id
        self.stop = threading.Event()  # handed to the agent as its cancel flag
        self.cancelled = False  # someone asked to cancel
        self.lost = False  # the run was ended elsewhere (reaped)
        self._on_stop_sandbox = on_stop_sandbox
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"run-{run_id}-supervisor", daemon=True)
        self._grace_timer: threading.Timer | None = None

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._done.set()
        if self._grace_timer is not None:
            self._grace_timer.cancel()
        self._thread.join(timeout=10)

    def _trigger(self, *, lost: bool) -> None:
        if self.stop.is_set():
            return
        self.lost, self.cancelled = lost, not lost
        self.stop.set()
        grace = 0.0 if lost else settings.RUN_CANCEL_GRACE_SECONDS
        self._grace_timer = threading.Timer(grace, self._stop_sandbox)
        self._grace_timer.daemon = True
        self._grace_timer.start()

    def _stop_sandbox(self) -> None:
        if not self._done.is_set():
            try:
                self._on_stop_sandbox()
            except Exception:
                log.exception("Could not stop the sandbox of run %s", self.run_id)

    def _watch(self) -> None:
        pubsub = _subscribe(self.run_id)
        heartbeat_every = settings.RUN_HEARTBEAT_SECONDS
        poll_every = settings.RUN_CANCEL_POLL_SECONDS
        next_beat = next_poll = time.monotonic()
        try:
            while not self._done.is_set():
                now = time.monotonic()
                if now >= next_beat:
                    next_beat = now + heartbeat_every
                    if not run_heartbeat(run_id=self.run_id):
                        self._trigger(lost=True)
                if now >= next_poll:
                    next_poll = now + poll_every
                    state = self._state()
                    if state is not None:
                        self._trigger(lost=state == "ended")
                wait = max(0.0, min(next_beat, next_poll) - time.monotonic())
                if pubsub is not None:
                    try:
                        message = pubsub.get_message(ignore_subscribe_messages=True, timeout=wait)
                    except redis.RedisError:
                        pubsub = None
                        continue
                    if message is not None and message.get("type") == "message":
                        self._trigger(lost=False)
                else:
                    self._done.wait(wait)
        except Exception:
            log.exception("Supervisor of run %s stopped", self.run_id)
        finally:
            if pubsub is not None:
                with contextlib.suppress(redis.RedisError):
                    pubsub.close()
            connection.close()

    def _state(self) -> str | None:
        """Whether the run "ended" (or is gone), has a "cancel" request, or neither (None)."""
        row = Run.objects.filter(pk=self.run_id).values_list("cancel_requested_at", "status").first()
        if row is None or row[1] not in ACTIVE_STATUSES:
            return "ended"
        return "cancel" if row[0] is not None else None


def _subscribe(run_id: int) -> redis.client.PubSub | None:
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=2)
        pubsub = client.pubsub()
        pubsub.subscribe(cancel_channel(run_id))
        return pubsub
    except redis.RedisError as error:
        log.warning("Cancel notifications for run %s fall back to polling: %s", run_id, error)
        return None
