"""A run nobody picks up (its queue message was lost) is queued again once, and
ended with a clear reason if it still waits: every run reaches a final status."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from creations.models import RunEvent, RunStatus
from creations.runs import reaper
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sent: list[int] = []
    monkeypatch.setattr("creations.runs.queue.enqueue_run", sent.append)
    return sent


def _queued_for(team: Team, seconds: float, **fields: Any) -> Any:
    run = make_run(team, **fields)
    type(run).objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=seconds))
    return run


@pytest.mark.django_db
def test_a_long_queued_run_is_enqueued_again_exactly_once(team: Team, enqueued: list[int], settings: Any) -> None:
    settings.RUN_QUEUED_REQUEUE_AFTER_SECONDS, settings.RUN_QUEUED_MAX_SECONDS = 60, 3600
    waiting = _queued_for(team, 120)
    fresh = _queued_for(team, 5)

    assert reaper.reap_stale_runs() == []
    assert reaper.reap_stale_runs() == []

    assert enqueued == [waiting.pk]
    waiting.refresh_from_db()
    fresh.refresh_from_db()
    assert (waiting.status, waiting.reason) == (RunStatus.QUEUED, reaper.REQUEUED_REASON)
    assert (fresh.status, fresh.reason) == (RunStatus.QUEUED, "")


@pytest.mark.django_db
def test_a_run_queued_too_long_ends_failed_with_a_reason_and_a_final_event(
    team: Team, enqueued: list[int], settings: Any
) -> None:
    settings.RUN_QUEUED_REQUEUE_AFTER_SECONDS, settings.RUN_QUEUED_MAX_SECONDS = 60, 600
    stuck = _queued_for(team, 700, reason=reaper.REQUEUED_REASON)

    assert reaper.reap_stale_runs() == [stuck.pk]

    stuck.refresh_from_db()
    assert (stuck.status, stuck.reason) == (RunStatus.FAILED, reaper.QUEUE_LOST_REASON)
    assert stuck.finished_at is not None
    final = RunEvent.objects.filter(run=stuck).order_by("-seq").first()
    assert final is not None
    assert (final.payload["status"], final.payload["final"]) == ("failed", True)
    assert enqueued == []  # already queued again once: not a second time
