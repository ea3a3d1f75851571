"""The admission query (creations/runs/admission.py) picks the same runs in the same order as its
fairness rules say, written here the plain way over a mixed queue; and it costs the same queries,
none of them reading creations, however many runs are queued."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from creations.models import IN_FLIGHT_STATUSES, Creation, Run, RunStatus
from creations.runs.admission import SERVED_HORIZON, admissible_queued_runs, run_claim_next
from tests.support.factories import RunFactory, UserFactory, WorkspaceFactory
from workspaces.models import Workspace


def _run(workspace: Workspace, status: str, *, created: datetime, started: datetime | None = None) -> Run:
    run = RunFactory.create(
        creation__workspace=workspace, status=status, finished=status not in (RunStatus.QUEUED, *IN_FLIGHT_STATUSES)
    )
    Run.objects.filter(pk=run.pk).update(created_at=created, started_at=started)
    return run


def fair_order() -> list[int]:
    """What admission means: per workspace, its runs in flight, then its queued runs oldest first;
    a queued run's place is its position there, and it may start when place <= quota. Order by
    place, then the workspace served least recently (its last start since the oldest waiting run
    arrived, and within the horizon; never: first), then the oldest run."""
    runs = list(Run.objects.values("id", "status", "created_at", "started_at", "workspace_id"))
    queued = [r for r in runs if r["status"] == RunStatus.QUEUED]
    if not queued:
        return []
    since = max(min(r["created_at"] for r in queued), timezone.now() - SERVED_HORIZON)
    quotas = dict(Workspace.objects.values_list("pk", "quota_concurrent_runs"))
    ranked = []
    for workspace_id, quota in quotas.items():
        in_flight = sum(r["workspace_id"] == workspace_id and r["status"] in IN_FLIGHT_STATUSES for r in runs)
        started = [r["started_at"] for r in runs if r["workspace_id"] == workspace_id and r["started_at"]]
        served = max((at for at in started if at >= since), default=None)
        waiting = sorted(
            (r for r in queued if r["workspace_id"] == workspace_id), key=lambda r: (r["created_at"], r["id"])
        )
        for position, run in enumerate(waiting, start=1):
            place = in_flight + position
            if place <= quota:
                ranked.append(((place, served is not None, served or since, run["created_at"], run["id"]), run["id"]))
    return [run_id for _, run_id in sorted(ranked)]


@pytest.mark.django_db
@pytest.mark.parametrize("seed", range(6))
def test_the_query_follows_the_fairness_rules_over_a_mixed_queue(seed: int) -> None:
    rng = random.Random(seed)
    now = timezone.now()
    for _ in range(8):
        workspace = WorkspaceFactory.create(quota_concurrent_runs=rng.randint(1, 3))
        for _ in range(rng.randint(0, 3)):
            created = now - timedelta(minutes=rng.randint(30, 300))
            _run(workspace, rng.choice(IN_FLIGHT_STATUSES), created=created, started=created + timedelta(minutes=1))
        for _ in range(rng.randint(0, 3)):  # ended runs: some started lately, some before the horizon
            created = now - timedelta(minutes=rng.choice([20, 40, 90, 200]) + rng.randint(0, 9))
            _run(workspace, RunStatus.SUCCEEDED, created=created, started=created + timedelta(seconds=30))
        for _ in range(rng.randint(0, 6)):
            _run(workspace, RunStatus.QUEUED, created=now - timedelta(seconds=rng.randint(0, 3000)))

    assert admissible_queued_runs() == fair_order()


def _queue_in(workspaces: int, runs_each: int) -> None:
    author = UserFactory.create()
    for _ in range(workspaces):
        workspace = WorkspaceFactory.create(quota_concurrent_runs=2)
        creations = Creation.objects.bulk_create(
            [Creation(workspace=workspace, author=author, brief="b") for _ in range(runs_each)]
        )
        Run.objects.bulk_create([Run(creation=c, workspace=workspace, version=1) for c in creations])


def _claim_queries() -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        assert run_claim_next(worker="w@test") is not None
    return [query["sql"] for query in queries.captured_queries]


@pytest.mark.django_db
def test_a_claim_costs_the_same_queries_with_thousands_queued_and_reads_no_creations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)
    _queue_in(workspaces=2, runs_each=3)
    few = _claim_queries()
    _queue_in(workspaces=40, runs_each=100)
    many = _claim_queries()

    assert len(few) == len(many) == 11  # the same few statements (savepoints included), whatever waits
    admission = next(sql for sql in many if "ROW_NUMBER" in sql)
    assert Creation._meta.db_table not in admission
