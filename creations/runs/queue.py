"""Waking the workers: the Celery messages that make them look for a run to start.

A message is a wake-up, not an assignment: the worker that receives one
claims the fairest admissible queued run (creations.runs.admission), which
may not be the run the message names, or finds none and returns at once. So
a run waiting for its workspace's slots holds no worker thread, and a flood of
messages from one workspace cannot push another workspace's run back.

One wake-up is sent after each submit and after each slot frees, and the
reaper sends more for runs that waited with a slot free (a lost message):
there are never fewer pending wake-ups than runs that could start, and a
spare one costs a query.

The task is sent by name, so the modules that send wake-ups need not import
the task module (which imports them): no import cycle.
"""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction

log = logging.getLogger(__name__)

# The name messages already in queues carry (then with a run id each): it stays.
RUN_TASK_NAME = "creations.runs.tasks.run_creation"


def send_wake_up(run_id: int | None = None) -> None:
    """Wake a worker now; `run_id` is the run this wake-up is for, if any (it
    is told why it waits when it cannot start). Raises when the broker cannot be reached."""
    current_app.send_task(RUN_TASK_NAME, args=[] if run_id is None else [run_id])


def send_wake_up_on_commit(run_id: int | None = None, *, robust: bool = False) -> None:
    """Wake a worker once the transaction commits, so it never looks for a run
    (or a free slot) not there yet. `robust`: a broker that cannot be reached
    is logged, not raised (the reaper sends the wake-up again later)."""

    def wake() -> None:
        try:
            send_wake_up(run_id)
        except Exception as error:
            if not robust:
                raise
            log.warning("Could not wake a worker (the reaper will): %s", error)

    transaction.on_commit(wake)
