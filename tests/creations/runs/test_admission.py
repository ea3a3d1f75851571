"""Admission: a workspace never has more runs in flight than its quota, the
slots free themselves when runs end, waiting runs say why, and the next run to
start is the fairest one across workspaces."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import OperationalError, connection
from django.test import Client

from creations.models import Run, RunEvent, RunStatus
from creations.runs.admission import admissible_queued_runs, in_flight_count, run_claim_next
from creations.runs.services import creation_submit, run_cancel
from creations.runs.state import run_finish
from tests.support.factories import RunFactory, WorkspaceFactory, make_run
from tests.support.fixtures.accounts import Team
from workspaces.models import Workspace

FULL_OF_ONE = "Waiting: 1 of 1 run in use in this workspace. It starts when one of them ends."


def _set_quota(workspace: Workspace, runs: int) -> None:
    workspace.quota_concurrent_runs = runs
    workspace.save(update_fields=["quota_concurrent_runs"])


def _queue(workspace: Workspace, count: int) -> list[int]:
    return [RunFactory.create(creation__workspace=workspace).pk for _ in range(count)]


def _claim_all() -> list[int]:
    claimed = []
    while (run_id := run_claim_next(worker="w@test")) is not None:
        claimed.append(run_id)
    return claimed


@pytest.mark.django_db
def test_runs_beyond_the_quota_stay_queued(team: Team) -> None:
    _set_quota(team.workspace, 2)
    runs = [make_run(team).pk for _ in range(5)]

    assert _claim_all() == runs[:2]

    statuses = dict(Run.objects.values_list("pk", "status"))
    assert [statuses[pk] for pk in runs] == [RunStatus.STARTING] * 2 + [RunStatus.QUEUED] * 3
    assert in_flight_count(team.workspace.pk) == 2


@pytest.mark.django_db
def test_every_final_status_frees_the_slot_once(team: Team) -> None:
    _set_quota(team.workspace, 1)
    first, second, third = (make_run(team).pk for _ in range(3))
    assert _claim_all() == [first]

    assert run_finish(run_id=first, status=RunStatus.FAILED, reason="worker lost")
    assert not run_finish(run_id=first, status=RunStatus.SUCCEEDED, reason="late")  # no second release
    assert _claim_all() == [second]

    run_cancel(run=Run.objects.get(pk=third), user=team.owner)  # a queued run never held a slot
    assert in_flight_count(team.workspace.pk) == 1
    assert _claim_all() == []


@pytest.mark.django_db
def test_the_first_waiting_run_of_every_workspace_starts_before_anyones_second() -> None:
    flood, single = WorkspaceFactory.create(), WorkspaceFactory.create()
    _set_quota(flood, 30)
    flooded = _queue(flood, 30)

    # Two workers take the flood's first two runs; then another workspace submits one run.
    assert [run_claim_next(worker="w1"), run_claim_next(worker="w2")] == flooded[:2]
    [lonely] = _queue(single, 1)

    assert run_claim_next(worker="w1") == lonely  # before the flood's third
    assert run_claim_next(worker="w2") == flooded[2]


@pytest.mark.django_db
def test_workspaces_take_turns_in_order_of_arrival() -> None:
    first, second, third = WorkspaceFactory.create(), WorkspaceFactory.create(), WorkspaceFactory.create()
    for workspace in (first, second, third):
        _set_quota(workspace, 10)
    a = _queue(first, 3)
    b = _queue(second, 2)
    c = _queue(third, 1)

    assert admissible_queued_runs() == [a[0], b[0], c[0], a[1], b[1], a[2]]
    assert _claim_all() == [a[0], b[0], c[0], a[1], b[1], a[2]]


@pytest.mark.django_db
def test_a_newcomer_goes_before_workspaces_already_served_even_when_they_have_nothing_in_flight() -> None:
    early, also_early, newcomer = WorkspaceFactory.create(), WorkspaceFactory.create(), WorkspaceFactory.create()
    first = _queue(early, 3)
    second = _queue(also_early, 3)
    assert _claim_all()[:2] == [first[0], second[0]]  # the quota (2 each) holds the rest
    for run_id in (first[0], second[0], first[1], second[1]):  # both served, and idle again
        run_finish(run_id=run_id, status=RunStatus.SUCCEEDED, reason="done")
    [late] = _queue(newcomer, 1)

    # Every workspace has nothing in flight: the one served least recently goes first, then round robin.
    assert _claim_all() == [late, first[2], second[2]]


@pytest.mark.django_db
def test_a_workspace_whose_quota_was_lowered_starts_nothing_until_it_is_under_it(team: Team) -> None:
    _set_quota(team.workspace, 2)
    running = [make_run(team).pk for _ in range(2)]
    waiting = make_run(team).pk
    assert _claim_all() == running
    _set_quota(team.workspace, 1)

    run_finish(run_id=running[0], status=RunStatus.SUCCEEDED, reason="done")
    assert _claim_all() == []
    run_finish(run_id=running[1], status=RunStatus.SUCCEEDED, reason="done")
    assert _claim_all() == [waiting]


@pytest.mark.django_db
def test_a_wake_up_that_cannot_start_its_run_tells_the_run_why_once(team: Team) -> None:
    _set_quota(team.workspace, 1)
    running, waiting = make_run(team).pk, make_run(team).pk
    assert run_claim_next(worker="w1", run_id=running) == running

    assert run_claim_next(worker="w1", run_id=waiting) is None
    assert run_claim_next(worker="w1", run_id=waiting) is None

    run = Run.objects.get(pk=waiting)
    assert (run.status, run.reason) == (RunStatus.QUEUED, FULL_OF_ONE)
    events = [e.payload for e in RunEvent.objects.filter(run_id=waiting)]
    assert events == [{"status": "queued", "reason": FULL_OF_ONE, "final": False}]

    # When it starts, the reason goes and the page hears so.
    run_finish(run_id=running, status=RunStatus.SUCCEEDED, reason="done")
    assert run_claim_next(worker="w1") == waiting
    run.refresh_from_db()
    assert (run.status, run.reason, run.admissible_since) == (RunStatus.STARTING, "", None)
    last = RunEvent.objects.filter(run_id=waiting).order_by("-seq").first()
    assert last is not None
    assert last.payload == {"status": "starting", "reason": "", "final": False}


@pytest.mark.django_db
def test_a_run_behind_others_that_are_about_to_start_says_so(team: Team) -> None:
    _set_quota(team.workspace, 2)
    _queue(team.workspace, 2)
    behind = make_run(team).pk

    assert run_claim_next(worker="w1", run_id=behind) is not None  # a wake-up took the first one

    assert Run.objects.get(pk=behind).reason == (
        "Waiting: this workspace runs 2 at a time, and its earlier runs start first."
    )


@pytest.mark.django_db
def test_a_claimed_run_is_handed_over_even_when_telling_another_why_it_waits_fails(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    from creations.runs import admission

    def database_away(*, run_id: int) -> None:
        raise OperationalError("the database went away")

    monkeypatch.setattr(admission, "run_note_waiting", database_away)
    _set_quota(team.workspace, 1)
    first, second = make_run(team).pk, make_run(team).pk

    assert run_claim_next(worker="w1", run_id=second) == first
    with pytest.raises(OperationalError):  # nothing was claimed: the wake-up is retried
        run_claim_next(worker="w1", run_id=second)


@pytest.mark.django_db
def test_a_run_submitted_to_a_full_workspace_says_why_on_its_page_at_once(team: Team) -> None:
    _set_quota(team.workspace, 1)
    assert run_claim_next(worker="w1", run_id=make_run(team).pk) is not None

    run = creation_submit(workspace=team.workspace, author=team.member, brief="a calm piano piece")

    assert (run.status, Run.objects.get(pk=run.pk).reason) == (RunStatus.QUEUED, FULL_OF_ONE)
    browser = Client()
    browser.force_login(team.viewer)
    page = browser.get(run.get_absolute_url())
    assert page.status_code == 200
    assert FULL_OF_ONE in page.content.decode()


@pytest.mark.django_db
def test_a_run_submitted_with_a_slot_free_gives_no_reason(team: Team) -> None:
    run = creation_submit(workspace=team.workspace, author=team.member, brief="a calm piano piece")
    run.refresh_from_db()
    assert run.reason == ""
    assert not RunEvent.objects.filter(run=run).exists()


@pytest.mark.django_db
def test_ending_a_started_run_wakes_a_worker_only_when_its_workspace_has_runs_waiting(
    team: Team, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    woken: list[int | None] = []
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id=None: woken.append(run_id))
    _set_quota(team.workspace, 1)
    first, second = make_run(team).pk, make_run(team).pk
    elsewhere = RunFactory.create(status=RunStatus.QUEUED).pk  # another workspace's queue is not this slot's
    assert run_claim_next(worker="w1") == first

    with django_capture_on_commit_callbacks(execute=True):
        run_finish(run_id=first, status=RunStatus.SUCCEEDED, reason="done")
    assert woken == [None]

    with django_capture_on_commit_callbacks(execute=True):
        run_finish(run_id=elsewhere, status=RunStatus.CANCELLED, reason="never started")
    assert woken == [None]  # a queued run held no slot

    assert run_claim_next(worker="w1") == second
    with django_capture_on_commit_callbacks(execute=True):
        run_finish(run_id=second, status=RunStatus.SUCCEEDED, reason="done")
    assert woken == [None]  # nothing waits in its workspace


@pytest.mark.django_db
def test_raising_a_workspaces_quota_wakes_a_worker_for_each_run_that_may_start_now(
    team: Team, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    woken: list[int | None] = []
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id=None: woken.append(run_id))
    _set_quota(team.workspace, 1)
    running, second, third, fourth = (make_run(team).pk for _ in range(4))
    assert run_claim_next(worker="w1") == running

    with django_capture_on_commit_callbacks(execute=True):
        _set_quota(team.workspace, 3)
    assert woken == [second, third]

    with django_capture_on_commit_callbacks(execute=True):
        team.workspace.name = "Renamed"
        team.workspace.save(update_fields=["name"])
    assert woken == [second, third]  # a save that leaves the quota alone wakes nobody
    assert fourth not in woken


@pytest.mark.django_db
def test_a_lost_broker_does_not_stop_a_run_from_ending(
    team: Team, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broker_down(run_id: int | None = None) -> None:
        raise ConnectionError("Redis is away")

    monkeypatch.setattr("creations.runs.queue.send_wake_up", broker_down)
    _set_quota(team.workspace, 1)
    first, _ = make_run(team).pk, make_run(team).pk
    assert run_claim_next(worker="w1") == first
    with django_capture_on_commit_callbacks(execute=True):
        assert run_finish(run_id=first, status=RunStatus.SUCCEEDED, reason="done")
    assert Run.objects.get(pk=first).status == RunStatus.SUCCEEDED


@pytest.mark.django_db(transaction=True)
def test_workers_racing_for_runs_never_exceed_a_quota_and_never_start_a_run_twice() -> None:
    busy, other = WorkspaceFactory.create(), WorkspaceFactory.create()
    _set_quota(busy, 2)
    _set_quota(other, 3)
    _queue(busy, 12)
    _queue(other, 12)

    claimed = _race(workers=16)

    assert len(claimed) == len(set(claimed)) == 5
    assert (in_flight_count(busy.pk), in_flight_count(other.pk)) == (2, 3)
    assert set(Run.objects.filter(status=RunStatus.STARTING).values_list("pk", flat=True)) == set(claimed)


@pytest.mark.django_db(transaction=True)
def test_the_quota_holds_even_when_workers_choose_from_an_outdated_view_of_the_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker picks its candidates from a snapshot that may be out of date by the
    time it claims (a submit that took long to commit lands ahead of the runs it
    saw): the recount under the workspace's lock alone must keep the quota."""
    from creations.runs import admission

    workspace = WorkspaceFactory.create()
    _set_quota(workspace, 2)
    _queue(workspace, 8)
    every_queued_run = list(
        Run.objects.filter(status=RunStatus.QUEUED).order_by("pk").values_list("pk", "creation__workspace_id")
    )
    monkeypatch.setattr(admission, "_admissible_runs", lambda limit=None: every_queued_run)
    count = admission.in_flight_count

    def slow_count(workspace_id: int) -> int:
        counted = count(workspace_id)
        time.sleep(0.05)  # a slow database: the gap between counting and claiming is wide open
        return counted

    monkeypatch.setattr(admission, "in_flight_count", slow_count)

    claimed = _race(workers=8)

    assert len(claimed) == 2
    assert count(workspace.pk) == 2


def _race(*, workers: int) -> list[int]:
    """`workers` threads claim at the same moment, each with its own connection; the runs claimed."""
    claimed: list[int | None] = []
    barrier = threading.Barrier(workers)

    def worker(number: int) -> None:
        try:
            barrier.wait()
            claimed.append(run_claim_next(worker=f"w{number}"))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [run_id for run_id in claimed if run_id is not None]
