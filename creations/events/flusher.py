"""The thread that stores what a run's event waiting lets wait (creations/events/store.py).

One per process, for every run of the process (one database connection): each
waiting with something waiting is due at a time, and stored then unless it was
stored before (the next step started, enough text came).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import Protocol

from django.db import close_old_connections, connection

from sandboxes.per_process import per_process

log = logging.getLogger(__name__)

IDLE_CLOSE_SECONDS = 5.0  # the flusher lets go of its database connection when idle this long


class Flushable(Protocol):
    def flush_if_due(self, now: float) -> float | None:
        """Store what waits if it is due; when to look again (None: nothing waits)."""


class _Flusher:
    """The one thread of this process that stores what waitings let wait (held events,
    streamed text) once it has waited its ~100 ms."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, Flushable]] = []  # a heap
        self._counter = itertools.count()
        self._thread: threading.Thread | None = None

    def schedule(self, waiting: Flushable, due: float) -> None:
        with self._wake:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._flush_forever, name="run-event-flusher", daemon=True)
                self._thread.start()
            heapq.heappush(self._due, (due, next(self._counter), waiting))
            self._wake.notify()

    def _flush_forever(self) -> None:
        while True:
            with self._wake:
                while not self._due or self._due[0][0] > time.monotonic():
                    if self._due:
                        self._wake.wait(timeout=self._due[0][0] - time.monotonic())
                    elif not self._wake.wait(timeout=IDLE_CLOSE_SECONDS) and not self._due:
                        connection.close()  # idle: hold no database connection
                        self._wake.wait()
                _, _, waiting = heapq.heappop(self._due)
            try:
                again = waiting.flush_if_due(time.monotonic())
            except Exception:  # the database is away for a moment
                log.exception("Run event flusher: storing failed")
                close_old_connections()
                continue
            if again is not None:
                self.schedule(waiting, again)


@per_process
def flusher() -> _Flusher:
    """This process's flusher: a forked child (Celery prefork) starts its own thread."""
    return _Flusher()
