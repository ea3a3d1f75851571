"""A run that keeps talking: a step stored (and announced) every few tenths of a second from a
thread of this process, so that a stream watching it never goes idle."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

from creations.events.store import store_events


@contextmanager
def chatty_run(run_id: int, *, every: float = 0.1) -> Iterator[None]:
    stop = threading.Event()

    def talk() -> None:
        step = 100
        try:
            while not stop.wait(every):
                step += 1
                store_events(run_id, [("step_started", {"step": step, "remaining": 1000})])
        finally:
            connection.close()  # this thread's own connection: the test database is dropped after

    talker = threading.Thread(target=talk, name=f"chatty-run-{run_id}", daemon=True)
    talker.start()
    try:
        yield
    finally:
        stop.set()
        talker.join(timeout=10)
