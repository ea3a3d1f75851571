"""The loop's events carry their payload models, each kind its own, and the terminal prints them."""

from __future__ import annotations

import pytest

from sandboxes.agent.events import (
    AgentEvent,
    Finished,
    OutcomeReason,
    StepStarted,
    TextDelta,
    ToolResult,
    UsageReport,
)
from sandboxes.agent.terminal import TrajectoryPrinter


def test_an_event_carries_the_payload_its_kind_declares() -> None:
    assert AgentEvent("assistant_delta", TextDelta(step=1, text="Let me")).payload.model_dump() == {
        "step": 1,
        "text": "Let me",
    }
    with pytest.raises(TypeError, match="carries a ToolResult, not a StepStarted"):
        AgentEvent("tool_result", StepStarted(step=1, remaining=3))
    with pytest.raises(ValueError, match="not an agent event kind"):
        AgentEvent("teleport", StepStarted(step=1, remaining=3))


def test_the_finished_event_stores_the_reason_as_its_word_and_reads_it_back_as_the_reason() -> None:
    finished = Finished(reason=OutcomeReason.BUDGET_EXHAUSTED, steps=4, message="The month is spent.")

    stored = finished.model_dump(mode="json")

    assert stored == {"reason": "budget_exhausted", "steps": 4, "message": "The month is spent."}
    assert Finished.model_validate(stored).reason is OutcomeReason.BUDGET_EXHAUSTED
    with pytest.raises(ValueError, match="reason"):
        Finished.model_validate({**stored, "reason": "gave_up"})


class _Style:
    """Marks each colour so a test can tell them apart."""

    def __getattr__(self, name: str) -> object:
        return lambda text: f"<{name}>{text}"


def _printed(*events: AgentEvent) -> str:
    lines: list[str] = []
    printer = TrajectoryPrinter(lines.append, _Style())
    for event in events:
        printer(event)
    return "".join(lines)


def test_the_terminal_prints_each_event_and_colours_the_end_by_how_the_run_ended() -> None:
    printed = _printed(
        AgentEvent("step_started", StepStarted(step=2, remaining=38)),
        AgentEvent("reasoning_delta", TextDelta(step=2, text="hm")),
        AgentEvent(
            "tool_result",
            ToolResult(
                step=2, call_id="c1", name="execute_bash", output="hi\n", is_error=False, exit_code=0, duration=1.5
            ),
        ),
        AgentEvent(
            "usage", UsageReport(step=2, prompt_tokens=900, completion_tokens=45, total_tokens=945, estimated=True)
        ),
    )

    assert "── step 2 · 38 left ──" in printed
    assert "(thinking) " in printed
    assert "hm" in printed
    assert "hi\n" in printed
    assert "[exit 0 · 1.50 s]" in printed
    assert "tokens: 900 in · 45 out (estimated)" in printed
    ended = {
        reason: _printed(AgentEvent("finished", Finished(reason=reason, steps=3, message="Because.")))
        for reason in OutcomeReason
    }
    assert "<SUCCESS>finished: submitted after 3 step(s) — Because." in ended[OutcomeReason.SUBMITTED]
    assert "<WARNING>finished: step_limit" in ended[OutcomeReason.STEP_LIMIT]
    assert "<WARNING>finished: time_limit" in ended[OutcomeReason.TIME_LIMIT]
    assert "<ERROR>finished: budget_exhausted" in ended[OutcomeReason.BUDGET_EXHAUSTED]
    assert "<ERROR>finished: model_error" in ended[OutcomeReason.MODEL_ERROR]
