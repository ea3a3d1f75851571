"""A worker process's run watcher lives only while the process has runs: once they have ended it
lets go of its database connection and Redis subscription (and stops retrying them when those
services go away, as when a worker is shut down), and the next run is watched as the first was."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.utils import timezone

from creations.models import Run, RunStatus
from creations.runs.supervision import RunSupervisor
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from tests.support.runs import wait_until

pytestmark = pytest.mark.django_db(transaction=True)  # the watcher reads the runs on a connection of its own

WATCHER_THREAD = "run-watcher"


def _watchers() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == WATCHER_THREAD]


def _clocks(settings: Any, *, beat: float, poll: float) -> None:
    settings.RUN_HEARTBEAT_SECONDS = beat
    settings.RUN_CANCEL_POLL_SECONDS = poll


def _watched(run: Run) -> RunSupervisor:
    supervisor = RunSupervisor(run.pk, on_stop_sandbox=lambda: None)
    supervisor.start()
    return supervisor


def test_the_watcher_ends_with_the_last_run_and_the_next_run_is_watched_again(settings: Any, team: Team) -> None:
    # Its clocks far apart, as a quiet deployment may set them: it still ends within about a second.
    _clocks(settings, beat=600, poll=600)
    first, second = (make_run(team, status=RunStatus.RUNNING) for _ in range(2))
    watching_first = _watched(first)
    watching_second = _watched(second)
    assert len(_watchers()) == 1  # one thread for all the process's runs

    watching_first.close()
    assert not watching_second.stop.wait(timeout=0.5)  # a run still going keeps its watcher
    assert len(_watchers()) == 1
    watching_second.close()
    wait_until(lambda: not _watchers(), timeout=5, what="the watcher to end with the process's last run")

    _clocks(settings, beat=0.2, poll=0.05)  # the next watcher keeps these
    later = make_run(team, status=RunStatus.RUNNING)
    watching_later = _watched(later)
    try:
        Run.objects.filter(pk=later.pk).update(cancel_requested_at=timezone.now())
        assert watching_later.stop.wait(timeout=5), "a run started after the watcher ended was not watched"
        assert watching_later.cancelled
    finally:
        watching_later.close()
    wait_until(lambda: not _watchers(), timeout=5, what="the watcher to end again")
