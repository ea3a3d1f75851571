"""What the run lifecycle tells the rest of the platform, once it has committed.

`run_finished` is sent after the transaction that gave a run its final status commits (never
for a status that was rolled back), with `run_id` and `status`. Receivers are called with
`send_robust`: one that fails is logged and cannot fail the run's ending.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

log = logging.getLogger(__name__)

run_finished = Signal()


def send_run_finished_on_commit(*, run_id: int, status: str) -> None:
    def send() -> None:
        for receiver, answer in run_finished.send_robust(sender=None, run_id=run_id, status=status):
            if isinstance(answer, Exception):
                log.error("%r failed on run %s's ending", receiver, run_id, exc_info=answer)

    transaction.on_commit(send)
