"""What a run's lifecycle tells the rest of the platform, without knowing who listens.

Two moments, for two kinds of listener:

- Inside the transaction that changed the run, so a listener's writes commit with the change or
  not at all (a listener that writes does so in a savepoint of its own):
  - `run_ended(run_id, status, reason)`: the run got its final status (creations.runs.state.run_finish).
  - `run_waiting(run_id, reason)`: a queued run waits for its workspace's slots, said once per reason.
- After that transaction commits (never for a status that was rolled back), for listeners that
  reach outside the database (webhooks, schedules):
  - `run_finished(run_id, status)`.

All are sent robustly: a listener that fails is logged, and the run's change stands.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.dispatch import Signal

log = logging.getLogger(__name__)

run_ended = Signal()
run_waiting = Signal()
run_finished = Signal()


def send_robustly(signal: Signal, **kwargs: Any) -> None:
    for receiver, answer in signal.send_robust(sender=None, **kwargs):
        if isinstance(answer, Exception):
            name = getattr(receiver, "__qualname__", receiver)
            log.error("A listener of a run's change failed (%s): %r", name, answer, exc_info=answer)


def send_run_finished_on_commit(*, run_id: int, status: str) -> None:
    transaction.on_commit(lambda: send_robustly(run_finished, run_id=run_id, status=status))
