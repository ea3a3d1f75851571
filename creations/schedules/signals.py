"""What a schedule tells the rest of the platform (the person who set it is told through these).

- `schedule_refreshed(schedule, run, refresh)`: a refresh ended with files that differ from the
  version it continued from: a new version worth telling about. A refresh whose files are
  identical is recorded, and sends nothing.
- `schedule_paused(schedule, reason)`: the schedule paused itself (a budget used up, its setter
  may no longer start runs, its model switched off); `reason` is what the creation page shows.

Both are sent after the transaction that decided them commits, with `send_robust`: a receiver
that fails is logged, and the schedule goes on.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.dispatch import Signal

log = logging.getLogger(__name__)

schedule_refreshed = Signal()
schedule_paused = Signal()


def send_on_commit(signal: Signal, **kwargs: Any) -> None:
    def send() -> None:
        for receiver, answer in signal.send_robust(sender=None, **kwargs):
            if isinstance(answer, Exception):
                log.error("%r failed on a schedule's signal", receiver, exc_info=answer)

    transaction.on_commit(send)
