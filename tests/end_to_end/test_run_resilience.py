"""What a person relies on when things go wrong: a dropped connection loses
nothing, cancel stops the sandbox and keeps the files, a killed worker's run
still ends, and many runs at once all keep complete trajectories."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from creations.models import Artifact, RunStatus
from creations.runs.reaper import worker_lost_reason
from devstack.containers import run_containers
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.support.fixtures.accounts import Team
from tests.support.runs import (
    scripted_endpoint,
    stored_events,
    submit,
    wait_for_event,
    wait_for_final,
    wait_until,
)
from tests.support.wsclient import open_stream, read_events

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

WRITE_DRAFT = "mkdir -p /testbed/output && echo 'first draft' > /testbed/output/draft.txt"


def test_a_reconnecting_watcher_gets_exactly_the_missed_events_then_the_live_ones(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    steps = [bash(f"echo step {i}; sleep 0.4", f"Step {i}.") for i in range(1, 9)] + [submit_reply("done")]
    endpoint = scripted_endpoint(team, scripted_model, steps)
    run = submit(team, endpoint)
    cookie = run_stack.cookie_for(team.member)
    wait_for_event(run, "step_started", step=2, logs=run_stack.logs)
    with open_stream(run_stack, run.pk, cookie=cookie) as ws:
        before, _ = read_events(ws, until_seq=5, timeout=30)
    last_seen = before[-1]["seq"]
    wait_for_event(run, "step_started", step=5, logs=run_stack.logs)  # the run moved on while we were away
    with open_stream(run_stack, run.pk, after=last_seen, cookie=cookie) as ws:
        after, closed = read_events(ws, timeout=120)
    run = wait_for_final(run, logs=run_stack.logs)

    assert run.status == RunStatus.SUCCEEDED, run.reason
    assert closed
    assert after[0]["seq"] == last_seen + 1
    stored = stored_events(run)
    assert [{k: e[k] for k in ("seq", "kind", "payload")} for e in before + after] == stored


def test_cancel_stops_the_sandbox_and_keeps_the_files_made_so_far(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [bash(WRITE_DRAFT), bash("sleep 120"), submit_reply()])
    run = submit(team, endpoint)
    wait_for_event(run, "tool_call", step=2, logs=run_stack.logs)
    browser = Client()
    browser.force_login(team.member)
    response = browser.post(f"/runs/{run.pk}/cancel/", HTTP_ACCEPT="application/json")
    assert response.status_code == 202
    run = wait_for_final(run, timeout=30, logs=run_stack.logs)

    assert run.status == RunStatus.CANCELLED
    assert run.reason == "Cancelled by bob; the files made until then are kept."
    assert [a.path for a in Artifact.objects.filter(run=run)] == ["draft.txt"]
    assert run_containers(run.pk) == []
    events = stored_events(run)
    assert events[-1]["payload"]["status"] == "cancelled"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


def test_cancelling_a_queued_run_ends_it_before_any_sandbox_starts(
    run_stack: AtelierServer, team: Team, scripted_model: ScriptedModel
) -> None:
    from creations.runs.services import run_cancel

    endpoint = scripted_endpoint(team, scripted_model, [submit_reply()])
    run_stack.kill_worker()  # nobody picks it up meanwhile
    try:
        run = submit(team, endpoint)
        assert run_cancel(run=run, user=team.owner)
        run.refresh_from_db()
        assert (run.status, run.reason) == (RunStatus.CANCELLED, "Cancelled by alice before it started.")
    finally:
        run_stack.start_worker()
    # The worker now receives the queued task and leaves the cancelled run alone.
    time.sleep(1)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert run.started_at is None
    assert scripted_model.chat_requests() == []


def test_a_worker_killed_mid_run_leaves_a_failed_run_its_events_and_no_container(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [bash(WRITE_DRAFT), bash("sleep 300"), submit_reply()])
    run = submit(team, endpoint)
    wait_for_event(run, "tool_call", step=2, logs=run_stack.logs)
    assert run_containers(run.pk) != []
    before_kill = stored_events(run)
    run_stack.kill_worker()
    run_stack.start_worker()  # as a process supervisor would; the dead worker's run is not its task
    run = wait_for_final(run, timeout=60, logs=run_stack.logs)

    assert run.status == RunStatus.FAILED
    assert run.reason == worker_lost_reason(run_stack.host_id)  # names the host that was lost
    after = stored_events(run)
    assert after[: len(before_kill)] == before_kill
    assert [e["seq"] for e in after] == list(range(1, len(after) + 1))
    assert after[-1]["payload"]["status"] == "failed"
    assert after[-1]["payload"]["final"] is True
    # The reaper removes the orphaned sandbox right after ending the run.
    wait_until(lambda: run_containers(run.pk) == [], timeout=30, what="the orphaned sandbox to go")


def test_ten_concurrent_runs_all_finish_with_gapless_trajectories(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    steps = [
        bash(
            "mkdir -p /testbed/output && for i in $(seq 1 50); do echo out $i; done > /testbed/output/list.txt; "
            "cat /testbed/output/list.txt"
        ),
        bash("echo second step"),
        submit_reply("made a list"),
    ]
    endpoint = scripted_endpoint(team, scripted_model, steps)
    team.workspace.quota_concurrent_runs = 10  # all ten at once, not two by two
    team.workspace.save(update_fields=["quota_concurrent_runs"])
    runs = [submit(team, endpoint, brief=f"list number {n}") for n in range(10)]
    finished = [wait_for_final(run, timeout=180, logs=run_stack.logs) for run in runs]

    assert [r.status for r in finished] == [RunStatus.SUCCEEDED] * 10, [r.reason for r in finished]
    for run in finished:
        events = stored_events(run)
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert run.last_seq == len(events)
        output = "".join(e["payload"]["text"] for e in events if e["kind"] == "tool_output_delta")
        assert "".join(f"out {i}\n" for i in range(1, 51)) in output
        assert [a.path for a in Artifact.objects.filter(run=run)] == ["list.txt"]
        assert run_containers(run.pk) == []
