"""Status changes happen exactly once, whoever races for them."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from creations.models import RunEvent, RunStatus
from creations.runs import state
from creations.runs.signals import run_finished
from creations.runs.state import run_finish, run_mark_running, run_mark_starting
from sandboxes.agent.usage import RunUsage
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team


@pytest.mark.django_db
def test_a_queued_run_is_claimed_by_one_worker_only(team: Team) -> None:
    run = make_run(team)
    assert run_mark_starting(run_id=run.pk, worker="w1@host")
    assert not run_mark_starting(run_id=run.pk, worker="w2@host")
    run.refresh_from_db()
    assert (run.status, run.worker) == (RunStatus.STARTING, "w1@host")
    assert run.started_at is not None
    assert run.heartbeat_at is not None


@pytest.mark.django_db
def test_running_needs_starting_first(team: Team) -> None:
    run = make_run(team)
    assert not run_mark_running(run_id=run.pk, sandbox_id="abc")
    run_mark_starting(run_id=run.pk, worker="w1")
    assert run_mark_running(run_id=run.pk, sandbox_id="abc")
    assert not run_mark_running(run_id=run.pk, sandbox_id="abc")


@pytest.mark.django_db
def test_each_status_change_is_an_event(team: Team) -> None:
    run = make_run(team)
    run_mark_starting(run_id=run.pk, worker="w1")
    run_mark_running(run_id=run.pk, sandbox_id="abc")
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="Submitted.", usage=RunUsage(steps=3))
    statuses = [(e.seq, e.payload["status"], e.payload["final"]) for e in RunEvent.objects.filter(run=run)]
    assert statuses == [(1, "starting", False), (2, "running", False), (3, "succeeded", True)]
    final = RunEvent.objects.get(run=run, seq=3)
    assert final.payload["usage"]["steps"] == 3
    assert final.payload["reason"] == "Submitted."


@pytest.mark.django_db
def test_a_final_status_is_never_changed(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    assert run_finish(run_id=run.pk, status=RunStatus.CANCELLED, reason="Cancelled.")
    assert not run_finish(run_id=run.pk, status=RunStatus.FAILED, reason="worker lost")
    run.refresh_from_db()
    assert (run.status, run.reason) == (RunStatus.CANCELLED, "Cancelled.")
    assert run.finished_at is not None
    assert RunEvent.objects.filter(run=run, kind="status").count() == 1


@pytest.mark.django_db
def test_only_final_statuses_can_finish_a_run(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    with pytest.raises(ValueError, match="not a final run status"):
        run_finish(run_id=run.pk, status=RunStatus.RUNNING, reason="")


@pytest.mark.django_db(transaction=True)
def test_racing_finishers_produce_one_final_status_and_one_final_event(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    results: list[bool] = []
    barrier = threading.Barrier(6)

    def finish(status: RunStatus) -> None:
        barrier.wait()
        try:
            results.append(run_finish(run_id=run.pk, status=status, reason=status))
        finally:
            connection.close()

    statuses = [RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED] * 2
    threads = [threading.Thread(target=finish, args=(s,)) for s in statuses]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 5 + [True]
    run.refresh_from_db()
    final_events = list(RunEvent.objects.filter(run=run, kind="status"))
    assert len(final_events) == 1
    assert final_events[0].payload["status"] == run.status


@pytest.mark.django_db
def test_an_ended_run_is_written_to_the_usage_ledger_once(team: Team) -> None:
    from creations.models import UsageRecord
    from tests.support.factories import record_step_usage

    run = make_run(team)
    run_mark_starting(run_id=run.pk, worker="w1")
    live = RunUsage(steps=3, prompt_tokens=1200, completion_tokens=300)
    record_step_usage(run, live)
    usage = live + RunUsage(sandbox_seconds=42.5, output_bytes=2048)  # the worker's count as the run ends

    assert run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="done", usage=usage)
    assert not run_finish(run_id=run.pk, status=RunStatus.FAILED, reason="again", usage=usage)

    [record] = UsageRecord.objects.all()
    assert (record.run_id, record.workspace_id, record.person_id) == (run.pk, team.workspace.pk, run.started_by_id)
    assert (record.prompt_tokens, record.completion_tokens, record.total_tokens) == (1200, 300, 1500)
    assert (record.sandbox_seconds, record.bytes_stored, record.status) == (42.5, 2048, RunStatus.SUCCEEDED)
    assert record.model_name == "demo"
    # Deleting the work keeps what it cost.
    run.creation.delete()
    record.refresh_from_db()
    assert record.run_id is None
    assert record.total_tokens == 1500


@pytest.mark.django_db
def test_a_run_s_end_is_announced_at_commit_before_the_work_it_sets_off(
    team: Team, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    """Watchers see a run end as soon as it is stored, not after the webhooks, schedules and
    evaluations told of it; and not before the commit either, when the end is part of a bigger write."""
    run = make_run(team, status=RunStatus.RUNNING)
    happened: list[str] = []
    monkeypatch.setattr(state, "announce_events", lambda run_id, events: happened.append(f"announced {events[-1].seq}"))

    def told(**kwargs: Any) -> None:
        happened.append("told of the end")

    run_finished.connect(told, weak=False)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="Submitted.")
            assert happened == []  # nothing said before the commit
    finally:
        run_finished.disconnect(told)

    final = RunEvent.objects.filter(run=run).order_by("seq").last()
    assert final is not None
    assert happened == [f"announced {final.seq}", "told of the end"]
