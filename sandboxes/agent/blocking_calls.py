"""Run one blocking call (a model request, a shell command) in a worker thread
while the loop thread forwards what it streams and watches for a stop.

This keeps two promises of the loop: every event is emitted from the loop
thread, and a cancel or an exhausted time budget is noticed at once, even
while the model has not sent its first byte or a command is still running.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

from sandboxes.agent.events import OutcomeReason

T = TypeVar("T")
StopReason = Literal[OutcomeReason.CANCELLED, OutcomeReason.TIME_LIMIT]
Forward = Callable[[Any], None]

POLL_SECONDS = 0.05  # how often a waiting loop looks at cancel and the clock


class _DaemonThreads:
    """Reuses idle threads: a step makes two calls, and starting a thread for
    each costs more than the loop's own bookkeeping. Unlike
    ThreadPoolExecutor's, these are daemon threads, so a call abandoned on
    cancel (a model request still waiting) never holds up process exit, and
    there is no cap for such a call to exhaust."""

    def __init__(self) -> None:
        self._idle: queue.SimpleQueue[queue.SimpleQueue[Callable[[], None]]] = queue.SimpleQueue()

    def submit(self, job: Callable[[], None]) -> None:
        try:
            inbox = self._idle.get_nowait()
        except queue.Empty:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name="agent-call", daemon=True).start()
        inbox.put(job)

    def _serve(self, inbox: queue.SimpleQueue[Callable[[], None]]) -> None:
        while True:
            inbox.get()()
            self._idle.put(inbox)


_CALLS = _DaemonThreads()


class Stopped(Exception):
    """The run was cancelled or ran out of time while waiting."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason: StopReason = reason


class _Done(Generic[T]):
    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def run_in_worker(
    call: Callable[[Forward], T],
    *,
    forward: Forward,
    cancel: threading.Event,
    deadline: float | None,
) -> T:
    """Run `call(push)` in a thread; every `push(item)` reaches `forward(item)`
    on this thread, in order. Raises Stopped, or what `call` raised."""
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def work() -> None:
        try:
            inbox.put(_Done(call(inbox.put)))
        except BaseException as error:  # handed over to the loop thread
            inbox.put(_Failed(error))

    _CALLS.submit(work)
    while True:
        try:
            item = inbox.get(timeout=POLL_SECONDS)
        except queue.Empty:
            item = None
        if isinstance(item, _Done):
            return item.value
        if isinstance(item, _Failed):
            raise item.error
        if item is not None:
            forward(item)
        if cancel.is_set():
            raise Stopped(OutcomeReason.CANCELLED)
        if deadline is not None and time.monotonic() >= deadline:
            raise Stopped(OutcomeReason.TIME_LIMIT)
