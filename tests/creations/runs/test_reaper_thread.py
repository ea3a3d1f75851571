"""Each worker process reaps in a thread of its own, on its clock: a run whose worker stopped beating
is ended without any Celery task, so however busy the run threads are, it is not kept waiting."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from creations.models import Run, RunStatus
from creations.runs import reaper
from creations.runs.reaper_thread import ReaperThread
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team


def _status(run: Run) -> str:
    run.refresh_from_db()
    return run.status


@pytest.mark.django_db(transaction=True)
def test_the_reaper_thread_ends_a_run_whose_worker_stopped_beating_on_its_own_clock(
    team: Team, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.RUN_REAPER_INTERVAL, settings.RUN_STALE_AFTER_SECONDS = 0.2, 30
    monkeypatch.setattr(reaper, "remove_ended_run_sandboxes", lambda: 0)  # no Docker engine here
    lost, alive = make_run(team), make_run(team)
    long_ago, now = timezone.now() - timedelta(seconds=60), timezone.now()
    Run.objects.filter(pk=lost.pk).update(
        status=RunStatus.RUNNING, created_at=long_ago, started_at=long_ago, heartbeat_at=long_ago
    )
    Run.objects.filter(pk=alive.pk).update(status=RunStatus.RUNNING, started_at=now, heartbeat_at=now)

    thread = ReaperThread()
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while _status(lost) != RunStatus.FAILED and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _status(alive) == RunStatus.RUNNING  # its worker beats
        # A later round, a run whose worker stopped beating since: the thread keeps its clock.
        Run.objects.filter(pk=alive.pk).update(created_at=long_ago, started_at=long_ago, heartbeat_at=long_ago)
        while _status(alive) != RunStatus.FAILED and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        thread.stop()
    lost.refresh_from_db()
    assert (lost.status, lost.reason) == (RunStatus.FAILED, reaper.worker_lost_reason(lost.sandbox_host))
    assert _status(alive) == RunStatus.FAILED


@pytest.mark.django_db(transaction=True)
def test_a_reaper_round_that_fails_is_logged_and_the_next_round_comes(
    settings: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings.RUN_REAPER_INTERVAL = 0.1
    rounds: list[float] = []

    def reap() -> list[int]:
        rounds.append(time.monotonic())
        raise RuntimeError("the database is away")

    monkeypatch.setattr(reaper, "reap_stale_runs", reap)
    thread = ReaperThread()
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while len(rounds) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        thread.stop()
    assert len(rounds) >= 3
    assert "The reaper could not look for runs whose worker died: the database is away" in caplog.text
