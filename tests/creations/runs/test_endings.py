"""How an agent's run ended decides the run's final status and the reason a person reads."""

from __future__ import annotations

import pytest

from creations.models import FINAL_STATUSES, RunStatus
from creations.runs.execution import CANCELLED_REASON, ending_for
from sandboxes.agent import AgentLimits, AgentOutcome, OutcomeReason
from sandboxes.agent.usage import RunUsage

LIMITS = AgentLimits(max_steps=40, max_tokens=50_000, max_wall_seconds=900)

FINAL_STATUS_OF: dict[OutcomeReason, RunStatus] = {
    OutcomeReason.SUBMITTED: RunStatus.SUCCEEDED,
    OutcomeReason.STEP_LIMIT: RunStatus.LIMIT_REACHED,
    OutcomeReason.TOKEN_LIMIT: RunStatus.LIMIT_REACHED,
    OutcomeReason.TIME_LIMIT: RunStatus.TIMED_OUT,
    OutcomeReason.BUDGET_EXHAUSTED: RunStatus.QUOTA_EXCEEDED,
    OutcomeReason.CANCELLED: RunStatus.CANCELLED,
    OutcomeReason.MODEL_ERROR: RunStatus.FAILED,
    OutcomeReason.SANDBOX_ERROR: RunStatus.FAILED,
}


def _outcome(reason: OutcomeReason, message: str = "") -> AgentOutcome:
    return AgentOutcome(reason=reason, message=message, usage=RunUsage(steps=3, prompt_tokens=10, completion_tokens=2))


@pytest.mark.parametrize("reason", list(OutcomeReason))
def test_each_way_an_agent_ends_gives_its_final_status(reason: OutcomeReason) -> None:
    ending = ending_for(_outcome(reason, "Because."), LIMITS)

    assert ending.status == FINAL_STATUS_OF[reason]
    assert ending.status in FINAL_STATUSES
    assert ending.reason


def test_the_reason_says_which_limit_stopped_the_run_and_what_the_agent_or_budget_said() -> None:
    assert ending_for(_outcome(OutcomeReason.SUBMITTED, "A poster."), LIMITS).reason == "A poster."
    assert ending_for(_outcome(OutcomeReason.SUBMITTED), LIMITS).reason == "The agent submitted its work."
    assert "step limit (40 steps)" in ending_for(_outcome(OutcomeReason.STEP_LIMIT), LIMITS).reason
    assert "token limit (50000 tokens)" in ending_for(_outcome(OutcomeReason.TOKEN_LIMIT), LIMITS).reason
    assert "time limit of 900 s" in ending_for(_outcome(OutcomeReason.TIME_LIMIT), LIMITS).reason
    spent = ending_for(_outcome(OutcomeReason.BUDGET_EXHAUSTED, "The month's tokens are used."), LIMITS)
    assert spent.reason.startswith("The month's tokens are used. The run was stopped")
    assert ending_for(_outcome(OutcomeReason.MODEL_ERROR, "Bad key."), LIMITS).reason == "The model failed. Bad key."
    assert ending_for(_outcome(OutcomeReason.SANDBOX_ERROR), LIMITS).reason == "The sandbox failed."
    assert ending_for(_outcome(OutcomeReason.CANCELLED), LIMITS).reason == CANCELLED_REASON


def test_the_reasons_travel_as_the_words_the_finished_event_has_always_stored() -> None:
    assert [str(reason) for reason in OutcomeReason] == [
        "submitted",
        "step_limit",
        "token_limit",
        "time_limit",
        "budget_exhausted",
        "cancelled",
        "model_error",
        "sandbox_error",
    ]
    assert OutcomeReason("budget_exhausted") is OutcomeReason.BUDGET_EXHAUSTED
