"""Admission on the real stack (Celery worker, gVisor sandboxes, scripted model):
a workspace never runs more than its quota at once, another workspace's run is
not held up by a flood, and a slot whose worker was killed frees itself."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import datetime

import pytest
from django.db import connection

from creations.models import Run, RunEvent, RunStatus
from creations.runs.admission import in_flight_count
from creations.runs.reaper import worker_lost_reason
from creations.runs.services import creation_submit, run_cancel
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.support.fixtures.accounts import Team
from tests.support.runs import (
    held_until,
    per_brief,
    scripted_endpoint,
    submit,
    wait_for_event,
    wait_for_final,
    wait_until,
)
from workspaces.models import ModelEndpoint, Workspace
from workspaces.services import workspace_create

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]


def _set_quota(workspace: Workspace, runs: int) -> None:
    workspace.quota_concurrent_runs = runs
    workspace.save(update_fields=["quota_concurrent_runs"])


def _most_in_flight_at_once(runs: Iterable[Run]) -> int:
    """From the stored status events: each run holds a slot from its `starting` event to its final one."""
    changes: list[tuple[datetime, int]] = []
    for run in runs:
        events = RunEvent.objects.filter(run=run, kind="status").order_by("seq")
        started = next(e.created_at for e in events if e.payload["status"] == RunStatus.STARTING)
        ended = next(e.created_at for e in events if e.payload["final"])
        changes += [(started, +1), (ended, -1)]
    most = now = 0
    for _, change in sorted(changes):  # at the same instant, an end (-1) sorts before a start
        now += change
        most = max(most, now)
    return most


def test_twenty_runs_submitted_at_once_run_two_at_a_time_and_all_succeed(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    _set_quota(team.workspace, 2)
    endpoint = scripted_endpoint(team, scripted_model, [bash("echo working"), submit_reply("done")])
    runs: list[Run] = []
    barrier = threading.Barrier(20)

    def person(number: int) -> None:
        try:
            barrier.wait()
            runs.append(submit(team, endpoint, brief=f"run number {number}"))
        finally:
            connection.close()

    sampled: list[int] = []
    sampling = threading.Event()

    def sample() -> None:
        try:
            while not sampling.wait(0.05):
                sampled.append(in_flight_count(team.workspace.pk))
        finally:
            connection.close()

    sampler = threading.Thread(target=sample)
    sampler.start()
    people = [threading.Thread(target=person, args=(n,)) for n in range(20)]
    for thread in people:
        thread.start()
    for thread in people:
        thread.join()
    try:
        finished = [wait_for_final(run, timeout=300, logs=run_stack.logs) for run in runs]
    finally:
        sampling.set()
        sampler.join()

    assert [r.status for r in finished] == [RunStatus.SUCCEEDED] * 20, [r.reason for r in finished]
    assert _most_in_flight_at_once(finished) == 2
    assert max(sampled) <= 2
    assert in_flight_count(team.workspace.pk) == 0  # no slot left in use


def test_a_flood_in_one_workspace_delays_another_workspaces_run_by_at_most_one_start(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    """Two worker threads, both busy with the flood's first runs: the first thread
    to free itself starts the other workspace's run, not the flood's third."""
    _set_quota(team.workspace, 30)  # the flood is held up by the workers, not by its own quota
    first_done, second_done = threading.Event(), threading.Event()
    endpoint = scripted_endpoint(team, scripted_model, [submit_reply()])
    scripted_model.exhausted = per_brief(
        {
            "flood #01": [held_until(first_done, submit_reply("first"))],
            "flood #02": [held_until(second_done, submit_reply("second"))],
        },
        default=[submit_reply("done")],
    )
    other = workspace_create(name="Elsewhere", owner=team.outsider)
    other_endpoint = ModelEndpoint.objects.create(
        workspace=other, name="scripted", base_url=scripted_model.base_url, model=scripted_model.model
    )
    flood: list[Run] = []
    with run_stack.worker_with_threads(2):
        try:
            flood = [submit(team, endpoint, brief=f"flood #{n:02}") for n in range(1, 31)]
            wait_until(
                lambda: Run.objects.filter(pk__in=[flood[0].pk, flood[1].pk], status=RunStatus.RUNNING).count() == 2,
                timeout=120,
                what="the flood's first two runs to hold both worker threads",
                logs=run_stack.logs,
            )
            single = creation_submit(
                workspace=other, author=team.outsider, brief="a single run", model_endpoint=other_endpoint
            )
            first_done.set()  # one thread frees itself
            single = wait_for_final(single, timeout=120, logs=run_stack.logs)
            second_done.set()
            third = wait_for_final(flood[2], timeout=120, logs=run_stack.logs)
        finally:
            first_done.set()
            second_done.set()
            for run in Run.objects.filter(pk__in=[r.pk for r in flood], status=RunStatus.QUEUED):
                run_cancel(run=run, user=team.owner)
            for run in flood:
                wait_for_final(run, timeout=120, logs=run_stack.logs)

    assert single.status == RunStatus.SUCCEEDED, single.reason
    assert single.started_at is not None
    assert third.started_at is not None
    assert single.started_at < third.started_at
    later_flood_starts = [
        started
        for started in Run.objects.filter(pk__in=[r.pk for r in flood[2:]]).values_list("started_at", flat=True)
        if started is not None
    ]
    assert min(later_flood_starts) > single.started_at


def test_the_slot_of_a_run_whose_worker_was_killed_frees_itself(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    _set_quota(team.workspace, 1)
    endpoint = scripted_endpoint(team, scripted_model, [submit_reply()])
    scripted_model.exhausted = per_brief(
        {"long run": [bash("echo started"), bash("sleep 300"), submit_reply()]}, default=[submit_reply("done")]
    )
    long_run = submit(team, endpoint, brief="long run")
    wait_for_event(long_run, "tool_call", step=2, logs=run_stack.logs)
    waiting = submit(team, endpoint, brief="waiting run")
    waiting.refresh_from_db()
    assert (waiting.status, waiting.reason) == (
        RunStatus.QUEUED,
        "Waiting: 1 of 1 run in use in this workspace. It starts when one of them ends.",
    )

    run_stack.kill_worker()
    run_stack.start_worker()  # as a process supervisor would
    long_run = wait_for_final(long_run, timeout=60, logs=run_stack.logs)
    assert (long_run.status, long_run.reason) == (RunStatus.FAILED, worker_lost_reason(run_stack.host_id))
    wait_until(
        lambda: Run.objects.filter(pk=waiting.pk, started_at__isnull=False).exists(),
        timeout=60,
        what="the waiting run to start in the freed slot",
        logs=run_stack.logs,
    )
    waiting = wait_for_final(waiting, timeout=120, logs=run_stack.logs)

    assert waiting.status == RunStatus.SUCCEEDED, waiting.reason
    assert long_run.finished_at is not None
    assert waiting.started_at is not None
    assert waiting.started_at > long_run.finished_at
    assert in_flight_count(team.workspace.pk) == 0
