"""Monthly budgets: which one is used up, when it renews, and how a running run learns of it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from creations.models import RunStatus, UsageRecord
from creations.usage.budgets import RunBudgetWatch, check_can_submit, duration_text
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

NOVEMBER = datetime(2031, 11, 20, 15, 30, tzinfo=UTC)


def spend(workspace: Workspace, *, tokens: int = 0, seconds: float = 0, at: datetime = NOVEMBER) -> None:
    UsageRecord.objects.create(
        workspace=workspace,
        model_name="scripted",
        status=RunStatus.SUCCEEDED,
        prompt_tokens=tokens,
        sandbox_seconds=seconds,
        recorded_at=at,
    )


def quotas(workspace: Workspace, *, tokens: int = 10**9, seconds: int = 10**9) -> Workspace:
    Workspace.objects.filter(pk=workspace.pk).update(quota_month_tokens=tokens, quota_month_sandbox_seconds=seconds)
    workspace.refresh_from_db()
    return workspace


def test_used_up_tokens_refuse_a_new_run_naming_the_budget_and_its_renewal(team: Team) -> None:
    workspace = quotas(team.workspace, tokens=20_000_000)
    spend(workspace, tokens=19_999_999)
    check_can_submit(workspace, now=NOVEMBER)
    spend(workspace, tokens=1)
    with pytest.raises(ValidationError) as refused:
        check_can_submit(workspace, now=NOVEMBER)
    assert refused.value.messages == [
        "This workspace has used its 20,000,000 model tokens for November; it renews on 1 December (UTC)."
    ]
    assert refused.value.code == "budget_exhausted"


def test_used_up_sandbox_time_refuses_a_new_run(team: Team) -> None:
    workspace = quotas(team.workspace, seconds=5400)
    spend(workspace, seconds=5400.0)
    with pytest.raises(ValidationError) as refused:
        check_can_submit(workspace, now=NOVEMBER)
    assert refused.value.messages == [
        "This workspace has used its 1 hour 30 minutes of sandbox time for November; it renews on 1 December (UTC)."
    ]


def test_a_new_month_renews_the_budgets(team: Team) -> None:
    workspace = quotas(team.workspace, tokens=1000, seconds=60)
    spend(workspace, tokens=5000, seconds=600, at=datetime(2031, 11, 30, 23, 59, 59, tzinfo=UTC))
    with pytest.raises(ValidationError, match="renews on 1 December"):
        check_can_submit(workspace, now=datetime(2031, 11, 30, 23, 59, 59, 999999, tzinfo=UTC))
    check_can_submit(workspace, now=datetime(2031, 12, 1, tzinfo=UTC))
    # December's own spending counts in December, and renews in January.
    spend(workspace, tokens=1000, at=datetime(2031, 12, 31, 12, tzinfo=UTC))
    with pytest.raises(ValidationError, match="model tokens for December; it renews on 1 January"):
        check_can_submit(workspace, now=datetime(2031, 12, 31, 13, tzinfo=UTC))


def test_runs_in_flight_count_toward_the_budget(team: Team) -> None:
    workspace = quotas(team.workspace, tokens=1000)
    make_run(team, status=RunStatus.RUNNING, started_at=timezone.now() + timedelta(seconds=1), prompt_tokens=1000)
    with pytest.raises(ValidationError, match="1,000 model tokens"):
        check_can_submit(workspace)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 seconds"), (1, "1 second"), (61, "1 minute 1 second"), (72_000, "20 hours"), (3600 * 1001, "1,001 hours")],
)
def test_quotas_of_time_read_as_a_person_says_them(seconds: int, text: str) -> None:
    assert duration_text(seconds) == text


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_running_run_sees_its_own_crossing_at_once_and_others_within_the_recheck(
    team: Team, django_assert_num_queries: Any
) -> None:
    workspace = quotas(team.workspace, tokens=1000, seconds=3600)
    run = make_run(team, status=RunStatus.RUNNING, started_at=timezone.now() + timedelta(seconds=1))
    clock = Clock()
    watch = RunBudgetWatch(workspace_id=workspace.pk, recheck_seconds=5, clock=clock)
    assert watch() is None

    # Its own tokens, under the headroom: no query.
    run.prompt_tokens = 600
    run.save(update_fields=["prompt_tokens"])
    watch.add_tokens(600)
    with django_assert_num_queries(0):
        assert watch() is None
    # ... and past it: asked again at once.
    run.prompt_tokens = 1000
    run.save(update_fields=["prompt_tokens"])
    watch.add_tokens(400)
    message = watch()
    assert message is not None
    assert message.startswith("This workspace has used its 1,000 model tokens for ")

    # Raising the quota is seen at the next recheck.
    quotas(workspace, tokens=5000, seconds=3600)
    assert watch() == message
    clock.now += 5
    assert watch() is None

    # Another run's spending is seen at the next recheck, not before.
    spend(workspace, tokens=4000, at=timezone.now())
    with django_assert_num_queries(0):
        assert watch() is None
    clock.now += 5
    assert watch() is not None


def test_a_running_run_sees_its_own_time_cross_the_sandbox_budget(team: Team) -> None:
    workspace = quotas(team.workspace, seconds=3600)
    spend(workspace, seconds=3500, at=timezone.now())
    clock = Clock()
    watch = RunBudgetWatch(workspace_id=workspace.pk, recheck_seconds=10_000, clock=clock)
    assert watch() is None
    clock.now += 99
    assert watch() is None
    # The database says the same once the run's own time is counted.
    spend(workspace, seconds=100, at=timezone.now())
    clock.now += 1
    assert "of sandbox time" in (watch() or "")


def test_a_database_hiccup_keeps_the_last_answer(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    watch = RunBudgetWatch(workspace_id=team.workspace.pk, recheck_seconds=5, clock=clock)
    assert watch() is None

    def broken(**kwargs: Any) -> None:
        raise ConnectionError("database away")

    monkeypatch.setattr("creations.usage.budgets.workspace_month_usage", broken)
    clock.now += 5
    assert watch() is None
