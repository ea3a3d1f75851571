"""What a run's lifecycle tells the rest of the platform, without knowing who listens.

Each is sent inside the transaction that changed the run, so a listener's writes commit with
the change or not at all; it is sent robustly (a listener that fails is logged, and the run's
change stands). A listener that writes does so in a savepoint of its own.

- `run_ended(run_id, status, reason)`: the run got its final status (creations.runs.state.run_finish).
- `run_waiting(run_id, reason)`: a queued run waits for its workspace's slots, said once per reason.
"""

from __future__ import annotations

import logging
from typing import Any

from django.dispatch import Signal

log = logging.getLogger(__name__)

run_ended = Signal()
run_waiting = Signal()


def send_robustly(signal: Signal, **kwargs: Any) -> None:
    for receiver, answer in signal.send_robust(sender=None, **kwargs):
        if isinstance(answer, Exception):
            name = getattr(receiver, "__qualname__", receiver)
            log.error("A listener of a run's change failed (%s): %r", name, answer)
