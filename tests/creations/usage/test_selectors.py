"""A workspace's month: the ledger's records of it, the runs still going, and the files it keeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from creations.models import Run, RunStatus, UsageRecord
from creations.usage.selectors import (
    budget_renews_at,
    month_start,
    workspace_month_usage,
    workspace_storage_bytes,
    workspaces_month_usage,
)
from tests.support.factories import ArtifactFactory, WorkspaceFactory, make_run
from tests.support.fixtures.accounts import Team
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

NOVEMBER = datetime(2031, 11, 20, 15, 30, tzinfo=UTC)


def record(
    workspace: Workspace, at: datetime, *, tokens: int = 0, seconds: float = 0, run: Run | None = None
) -> UsageRecord:
    return UsageRecord.objects.create(
        run=run,
        workspace=workspace,
        model_name="scripted",
        status=RunStatus.SUCCEEDED,
        prompt_tokens=tokens - tokens // 4,
        completion_tokens=tokens // 4,
        sandbox_seconds=seconds,
        recorded_at=at,
    )


@pytest.mark.parametrize(
    ("now", "start", "renews"),
    [
        (NOVEMBER, datetime(2031, 11, 1, tzinfo=UTC), datetime(2031, 12, 1, tzinfo=UTC)),
        (
            datetime(2031, 12, 31, 23, 59, 59, tzinfo=UTC),
            datetime(2031, 12, 1, tzinfo=UTC),
            datetime(2032, 1, 1, tzinfo=UTC),
        ),
        (datetime(2032, 2, 29, 12, tzinfo=UTC), datetime(2032, 2, 1, tzinfo=UTC), datetime(2032, 3, 1, tzinfo=UTC)),
        # Months are UTC months: 1 December 00:30 in Tokyo is still November.
        (
            datetime(2031, 12, 1, 0, 30, tzinfo=timezone.get_fixed_timezone(9 * 60)),
            datetime(2031, 11, 1, tzinfo=UTC),
            datetime(2031, 12, 1, tzinfo=UTC),
        ),
    ],
)
def test_a_month_is_a_calendar_month_in_utc(now: datetime, start: datetime, renews: datetime) -> None:
    assert month_start(now) == start
    assert budget_renews_at(now) == renews


def test_the_month_counts_its_ledger_records_and_nothing_from_other_months_or_workspaces(team: Team) -> None:
    record(team.workspace, datetime(2031, 11, 1, tzinfo=UTC), tokens=1000, seconds=60)
    record(team.workspace, datetime(2031, 11, 30, 23, 59, 59, tzinfo=UTC), tokens=200, seconds=30.5)
    record(team.workspace, datetime(2031, 10, 31, 23, 59, 59, tzinfo=UTC), tokens=50_000, seconds=9000)
    record(team.workspace, datetime(2031, 12, 1, tzinfo=UTC), tokens=70_000, seconds=9000)
    record(WorkspaceFactory.create(), NOVEMBER, tokens=90_000, seconds=9000)

    usage = workspace_month_usage(workspace=team.workspace, now=NOVEMBER)

    assert (usage.tokens, usage.sandbox_seconds) == (1200, 90.5)
    assert (usage.month_start, usage.renews_at) == (
        datetime(2031, 11, 1, tzinfo=UTC),
        datetime(2031, 12, 1, tzinfo=UTC),
    )


def test_a_new_month_starts_from_nothing(team: Team) -> None:
    record(team.workspace, datetime(2031, 11, 30, 23, 59, tzinfo=UTC), tokens=1000, seconds=60)
    december = workspace_month_usage(workspace=team.workspace, now=datetime(2031, 12, 1, tzinfo=UTC))
    assert (december.tokens, december.sandbox_seconds) == (0, 0)


def test_runs_in_flight_count_live_and_ended_runs_only_through_the_ledger(team: Team) -> None:
    started = timezone.now() + timedelta(seconds=1)
    now = started + timedelta(seconds=100)
    make_run(team, status=RunStatus.RUNNING, started_at=started, prompt_tokens=300, completion_tokens=20)
    make_run(team, status=RunStatus.STARTING, started_at=started + timedelta(seconds=30), prompt_tokens=5)
    make_run(team, status=RunStatus.QUEUED)
    # Ended: its usage is in the ledger (written with its final status), and counted only there.
    ended = make_run(team, status=RunStatus.SUCCEEDED, started_at=started, finished_at=now, prompt_tokens=999)
    record(team.workspace, now, tokens=999, seconds=12, run=ended)

    usage = workspace_month_usage(workspace=team.workspace, now=now)

    assert (usage.recorded_tokens, usage.in_flight_tokens, usage.tokens) == (999, 325, 1324)
    assert usage.in_flight_sandbox_seconds == pytest.approx(100 + 70)
    assert usage.sandbox_seconds == pytest.approx(12 + 170)


def test_the_storage_in_use_is_the_size_of_the_workspaces_artifacts(team: Team) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    ArtifactFactory.create(run=run, size=1000)
    ArtifactFactory.create(run=run, size=24)
    ArtifactFactory.create(size=10**9)  # another workspace's

    assert workspace_storage_bytes(workspace=team.workspace) == 1024
    assert workspace_month_usage(workspace=team.workspace).storage_bytes == 1024
    assert workspace_storage_bytes(workspace=WorkspaceFactory.create()) == 0


def test_the_months_figures_are_one_query(team: Team, django_assert_num_queries: Any) -> None:
    record(team.workspace, NOVEMBER, tokens=10)
    with django_assert_num_queries(1):
        workspace_month_usage(workspace=team.workspace, now=NOVEMBER)


def test_several_workspaces_months_are_one_query_each_with_its_own_figures(
    team: Team, django_assert_num_queries: Any
) -> None:
    other, idle = WorkspaceFactory.create(), WorkspaceFactory.create()
    record(team.workspace, NOVEMBER, tokens=10, seconds=1)
    record(other, NOVEMBER, tokens=300, seconds=2.5)
    ArtifactFactory.create(run=make_run(team, status=RunStatus.SUCCEEDED, finished=True), size=64)

    with django_assert_num_queries(1):
        months = workspaces_month_usage(workspaces=[team.workspace, other.pk, idle], now=NOVEMBER)

    figures = {pk: (usage.tokens, usage.sandbox_seconds, usage.storage_bytes) for pk, usage in months.items()}
    assert figures == {team.workspace.pk: (10, 1.0, 64), other.pk: (300, 2.5, 0), idle.pk: (0, 0.0, 0)}
    assert months[other.pk] == workspace_month_usage(workspace=other, now=NOVEMBER)
