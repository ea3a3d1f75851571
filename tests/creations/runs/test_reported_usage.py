"""A model endpoint that reports nonsense usage (below zero, past any context window) cannot
bend what its workspace is counted: the run's totals, its ledger record and the month's
figures hold the counts within 0..AGENT_MODEL_MAX_REPORTED_TOKENS, and the run ends normally."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from creations.models import RunStatus, UsageRecord
from creations.runs.admission import run_claim_next
from creations.runs.execution import run_execute
from creations.usage.selectors import workspace_month_usage
from devstack.scripted_model import ScriptedModel, bash, call, reply
from sandboxes.runtime import Sandbox
from tests.support.fakes import FakeSandbox
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, submit

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

HUGE = 10**30  # past any context window, and past what a database column holds


class FakeSandboxes:
    """Hands out in-memory sandboxes: the run's bookkeeping is what is tested here, not gVisor."""

    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        return FakeSandbox()

    def release(self, sandbox: Sandbox) -> None:
        sandbox.stop()


@pytest.fixture
def runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs execute in this test's process, in fake sandboxes, woken by nobody."""
    monkeypatch.setattr("creations.runs.execution.get_provider", FakeSandboxes)
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)


def test_nonsense_usage_is_held_within_bounds_from_the_reply_to_the_ledger(
    team: Team, scripted_model: ScriptedModel, runs_here: None, settings: Any
) -> None:
    settings.AGENT_MODEL_MAX_REPORTED_TOKENS = 50_000
    endpoint = scripted_endpoint(
        team,
        scripted_model,
        [
            bash("echo 1", usage={"prompt_tokens": -7_000_000, "completion_tokens": HUGE}),
            bash("echo 2", usage={"prompt_tokens": HUGE, "completion_tokens": -3}),
            reply("", [call("submit", {"summary": "done"})], usage={"prompt_tokens": 100, "completion_tokens": 10}),
        ],
    )
    run = submit(team, endpoint, brief="three steps")

    assert run_claim_next(worker="test") == run.pk
    run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.reason
    assert (run.prompt_tokens, run.completion_tokens) == (50_100, 50_010)
    record = UsageRecord.objects.get(run=run)
    assert (record.prompt_tokens, record.completion_tokens) == (50_100, 50_010)
    assert workspace_month_usage(workspace=team.workspace).tokens == 100_110
    shown = [e.payload for e in run.events.filter(kind="usage").order_by("seq")]
    assert [(u["prompt_tokens"], u["completion_tokens"]) for u in shown] == [(0, 50_000), (50_000, 0), (100, 10)]
