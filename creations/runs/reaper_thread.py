"""The reaper's own thread in every worker process.

Ending the runs of a worker that died (creations.runs.reaper) must not wait
for a free run thread. As a Celery task it would wait behind the wake-ups on
a host whose every thread runs a run, and expire unheard, while a dead
host's runs kept their workspaces' slots. So each worker process reaps
on its own clock (RUN_REAPER_INTERVAL), in a thread of its own, as it starts
and then every interval. Several processes reaping at once is harmless: each
run is ended by one conditional UPDATE, whoever gets there first.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import connection

from creations.runs import reaper
from sandboxes.per_process import per_process

log = logging.getLogger(__name__)


class ReaperThread:
    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._reap_on_the_clock, name="runs-reaper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10) -> None:
        self._stopped.set()
        self._thread.join(timeout)

    def _reap_on_the_clock(self) -> None:
        while True:
            self.reap_once()
            if self._stopped.wait(settings.RUN_REAPER_INTERVAL):
                return

    def reap_once(self) -> None:
        try:
            reaper.reap_stale_runs()
        except Exception as error:  # the database is away: the next round retries
            log.warning("The reaper could not look for runs whose worker died: %s", error)
        finally:
            connection.close()  # this thread holds no connection between rounds


@per_process
def start_reaping() -> ReaperThread:
    """Start this worker process's reaper thread (once)."""
    thread = ReaperThread()
    thread.start()
    return thread


def stop_reaping() -> None:
    for thread in start_reaping.reset():
        thread.stop()
