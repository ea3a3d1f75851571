"""Budgets in the agent loop: the run's own token budget, and a budget beyond it
(a team's month) that the caller checks once per step. Either way the model
is told, gets one last step to submit, and the run ends with its reason."""

from __future__ import annotations

import json

from devstack.scripted_model import ScriptedModel, bash, submit
from sandboxes.agent.prompts import SHARED_BUDGET_NOTE
from tests.support.agent import client_for, run
from tests.support.fakes import FakeSandbox


def test_the_token_budget_gets_one_last_step_then_ends_the_run(scripted_model: ScriptedModel) -> None:
    usage = {"prompt_tokens": 600, "completion_tokens": 10}
    scripted_model.play([bash("echo 1", usage=usage), bash("echo 2", usage=usage), bash("echo 3", usage=usage)])

    outcome, _ = run(FakeSandbox(), client_for(scripted_model), max_tokens=500)

    assert outcome.reason == "token_limit"
    assert outcome.usage.steps == 2
    assert "token budget" in scripted_model.chat_requests()[1].messages[-1]["content"]


def test_a_spent_outside_budget_asks_for_a_submit_then_ends_the_run_with_its_message(
    scripted_model: ScriptedModel,
) -> None:
    scripted_model.play([bash("echo 1"), bash("echo 2"), bash("echo 3"), bash("echo 4")])
    answers = iter([None, "The team's month is spent."])
    asked: list[int] = []

    def over_budget() -> str | None:
        asked.append(1)
        return next(answers, "The team's month is spent.")

    outcome, events = run(FakeSandbox(), client_for(scripted_model), over_budget=over_budget)

    assert (outcome.reason, outcome.message) == ("budget_exhausted", "The team's month is spent.")
    assert outcome.usage.steps == 2
    assert len(asked) == 3  # once before each step, and once more to end it
    requests = scripted_model.chat_requests()
    assert len(requests) == 2
    assert SHARED_BUDGET_NOTE in requests[1].messages[-1]["content"]
    assert SHARED_BUDGET_NOTE not in json.dumps(requests[0].messages)
    assert events.of("finished")[0] == {
        "reason": "budget_exhausted",
        "steps": 2,
        "message": "The team's month is spent.",
    }


def test_a_submit_after_the_budget_note_is_a_success(scripted_model: ScriptedModel) -> None:
    scripted_model.play([submit("made it in time")])

    outcome, _ = run(FakeSandbox(), client_for(scripted_model), over_budget=lambda: "spent")

    assert (outcome.reason, outcome.message) == ("submitted", "made it in time")
    assert SHARED_BUDGET_NOTE in scripted_model.chat_requests()[0].messages[-1]["content"]


def test_a_budget_check_that_fails_does_not_end_the_run(scripted_model: ScriptedModel) -> None:
    scripted_model.play([bash("echo 1"), submit()])

    def broken() -> str | None:
        raise RuntimeError("database away")

    outcome, _ = run(FakeSandbox(), client_for(scripted_model), over_budget=broken)

    assert outcome.reason == "submitted"
