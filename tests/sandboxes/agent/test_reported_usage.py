"""What an endpoint says a reply used is its own to make up: a count below zero, or past
any context window, is held to 0..AGENT_MODEL_MAX_REPORTED_TOKENS before the run counts it,
shows it, or checks its token limit with it."""

from __future__ import annotations

from typing import Any

import pytest

from devstack.scripted_model import ScriptedModel, bash, call, reply, submit
from tests.support.agent import client_for, run
from tests.support.fakes import FakeSandbox

HUGE = 10**30  # past any context window, and past what a database column holds


def test_negative_and_huge_counts_are_held_to_the_bound(scripted_model: ScriptedModel, settings: Any) -> None:
    settings.AGENT_MODEL_MAX_REPORTED_TOKENS = 50_000
    scripted_model.play(
        [
            bash("echo 1", usage={"prompt_tokens": -5_000, "completion_tokens": HUGE}),
            bash("echo 2", usage={"prompt_tokens": HUGE, "completion_tokens": -1}),
            reply("", [call("submit", {"summary": "done"})], usage={"prompt_tokens": 120, "completion_tokens": 8}),
        ]
    )

    outcome, events = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    shown = [(u["prompt_tokens"], u["completion_tokens"], u["total_tokens"]) for u in events.of("usage")]
    assert shown == [(0, 50_000, 50_000), (50_000, 0, 50_000), (120, 8, 128)]
    assert (outcome.usage.prompt_tokens, outcome.usage.completion_tokens) == (50_120, 50_008)


def test_a_huge_count_still_reaches_the_runs_token_limit(scripted_model: ScriptedModel) -> None:
    huge = {"prompt_tokens": HUGE, "completion_tokens": 0}
    scripted_model.play([bash("echo 1", usage=huge), bash("echo 2", usage=huge), bash("echo 3", usage=huge)])

    outcome, _ = run(FakeSandbox(), client_for(scripted_model), max_tokens=1000)

    assert outcome.reason == "token_limit"


@pytest.mark.parametrize("count", ["many", 12.5, None, True], ids=["text", "fraction", "null", "boolean"])
def test_a_count_that_is_not_a_whole_number_is_no_crash(scripted_model: ScriptedModel, count: Any) -> None:
    usage: dict[str, Any] = {"prompt_tokens": count, "completion_tokens": 3, "total_tokens": 3}
    scripted_model.play([reply("", [], usage=usage), submit()])

    outcome, events = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    first = events.of("usage")[0]
    assert first["completion_tokens"] == 3
    assert 0 <= first["prompt_tokens"] <= 13
