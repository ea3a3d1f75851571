"""A run that could have started but nobody started (its wake-up was lost) gets
one more wake-up, and is ended with a clear reason if it still waits: every run
reaches a final status. Waiting for the workspace's own runs to end is not that."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from creations.models import Run, RunEvent, RunStatus
from creations.runs import reaper
from creations.runs.state import run_finish
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team


@pytest.fixture
def woken(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    sent: list[int | None] = []
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id=None: sent.append(run_id))
    return sent


def _ago(seconds: float) -> Any:
    return timezone.now() - timedelta(seconds=seconds)


def _queued(team: Team, *, created_ago: float, **fields: Any) -> Run:
    run = make_run(team, **fields)
    Run.objects.filter(pk=run.pk).update(created_at=_ago(created_ago))
    return run


def _running(team: Team) -> Run:
    run = make_run(team)
    now = timezone.now()
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, started_at=now, heartbeat_at=now)
    return run


@pytest.mark.django_db
def test_a_run_that_could_have_started_long_ago_is_woken_for_again_exactly_once(
    team: Team, woken: list[int | None], settings: Any
) -> None:
    settings.RUN_QUEUED_REQUEUE_AFTER_SECONDS, settings.RUN_QUEUED_MAX_SECONDS = 60, 3600
    waiting = _queued(team, created_ago=120, admissible_since=_ago(120))
    fresh = _queued(team, created_ago=5)

    assert reaper.reap_stale_runs() == []
    assert reaper.reap_stale_runs() == []

    assert woken == [waiting.pk]
    waiting.refresh_from_db()
    fresh.refresh_from_db()
    assert (waiting.status, waiting.reason) == (RunStatus.QUEUED, reaper.REQUEUED_REASON)
    assert (fresh.status, fresh.reason) == (RunStatus.QUEUED, "")
    assert fresh.admissible_since is not None  # its clock starts now, not at its creation


@pytest.mark.django_db
def test_a_run_that_could_have_started_for_too_long_ends_failed_with_a_reason_and_a_final_event(
    team: Team, woken: list[int | None], settings: Any
) -> None:
    settings.RUN_QUEUED_REQUEUE_AFTER_SECONDS, settings.RUN_QUEUED_MAX_SECONDS = 60, 600
    stuck = _queued(team, created_ago=700, admissible_since=_ago(700), reason=reaper.REQUEUED_REASON)

    assert reaper.reap_stale_runs() == [stuck.pk]

    stuck.refresh_from_db()
    assert (stuck.status, stuck.reason) == (RunStatus.FAILED, reaper.QUEUE_LOST_REASON)
    assert stuck.finished_at is not None
    final = RunEvent.objects.filter(run=stuck).order_by("-seq").first()
    assert final is not None
    assert (final.payload["status"], final.payload["final"]) == ("failed", True)
    assert woken == []  # already woken for again once: not a second time


@pytest.mark.django_db
def test_a_run_waiting_for_its_workspaces_slots_is_neither_woken_nor_ended_however_long_it_waits(
    team: Team, woken: list[int | None], settings: Any
) -> None:
    settings.RUN_QUEUED_REQUEUE_AFTER_SECONDS, settings.RUN_QUEUED_MAX_SECONDS = 60, 600
    team.workspace.quota_concurrent_runs = 1
    team.workspace.save()
    running = _running(team)
    waiting = _queued(team, created_ago=7200)

    assert reaper.reap_stale_runs() == []

    waiting.refresh_from_db()
    assert (waiting.status, waiting.admissible_since) == (RunStatus.QUEUED, None)
    assert woken == []

    # Its slot frees: from now on it could start, and only from now on does its wait count.
    run_finish(run_id=running.pk, status=RunStatus.SUCCEEDED, reason="done")
    assert reaper.reap_stale_runs() == []
    waiting.refresh_from_db()
    assert waiting.status == RunStatus.QUEUED
    assert waiting.admissible_since is not None
    assert waiting.admissible_since > timezone.now() - timedelta(seconds=60)
    assert woken == []


@pytest.mark.django_db
def test_a_run_whose_workspace_lowered_its_quota_stops_counting(
    team: Team, woken: list[int | None], settings: Any
) -> None:
    team.workspace.quota_concurrent_runs = 2
    team.workspace.save()
    _running(team)
    waiting = _queued(team, created_ago=30)
    reaper.reap_stale_runs()
    waiting.refresh_from_db()
    assert waiting.admissible_since is not None

    team.workspace.quota_concurrent_runs = 1
    team.workspace.save()
    reaper.reap_stale_runs()

    waiting.refresh_from_db()
    assert (waiting.status, waiting.admissible_since) == (RunStatus.QUEUED, None)
