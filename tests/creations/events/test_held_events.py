"""Held events: a run's worker lets a step's events wait and stores them with the next step's
start, as one write and one announcement, its usage counted in the same write; what waits is
still stored within the coalescing time when nothing comes after it, and never after the end."""

from __future__ import annotations

import time

import pytest

from creations.events.store import EventRecorder
from creations.models import Run, RunEvent, RunStatus
from creations.runs.state import run_finish
from sandboxes.agent.events import AssistantMessage, StepStarted, ToolCall, ToolOutputDelta, ToolResult, UsageReport
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def announced(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The seqs of each announcement the recorder makes."""
    calls: list[list[int]] = []
    monkeypatch.setattr(
        "creations.events.store.announce", lambda run_id, *, last_seq, events: calls.append([e["seq"] for e in events])
    )
    return calls


def _step(recorder: EventRecorder, step: int) -> None:
    """A step as the worker records it: all held until the next step starts."""
    usage = UsageReport(step=step, prompt_tokens=100, completion_tokens=10, total_tokens=110, estimated=False)
    recorder.record("usage", usage, hold=True, add={"steps": 1, "prompt_tokens": 100, "completion_tokens": 10})
    recorder.record("assistant_message", AssistantMessage(step=step, content="ok"), hold=True)
    call = ToolCall(step=step, call_id=f"c{step}", name="execute_bash", arguments={"command": "ls"})
    recorder.record("tool_call", call, hold=True)
    recorder.record("tool_output_delta", ToolOutputDelta(step=step, call_id=f"c{step}", text="a\n"))
    result = ToolResult(
        step=step, call_id=f"c{step}", name="execute_bash", output="a\n", is_error=False, exit_code=0, duration=0.1
    )
    recorder.record("tool_result", result, hold=True)


def _kinds(run: Run) -> list[tuple[int, str]]:
    return list(RunEvent.objects.filter(run=run).order_by("seq").values_list("seq", "kind"))


def test_a_step_is_stored_and_announced_once_with_its_usage_when_the_next_step_starts(
    team: Team, announced: list[list[int]]
) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    recorder = EventRecorder(run.pk, coalesce_seconds=600)
    recorder.record("step_started", StepStarted(step=1, remaining=1))
    _step(recorder, 1)
    assert _kinds(run) == [(1, "step_started")]  # the step's events wait for the next step
    run.refresh_from_db()
    assert (run.steps, run.prompt_tokens) == (0, 0)

    recorder.record("step_started", StepStarted(step=2, remaining=0))

    assert [kind for _, kind in _kinds(run)] == [
        "step_started", "usage", "assistant_message", "tool_call", "tool_output_delta", "tool_result", "step_started",
    ]  # fmt: skip
    assert announced == [[1], [2, 3, 4, 5, 6, 7]]
    run.refresh_from_db()
    assert (run.last_seq, run.steps, run.prompt_tokens, run.completion_tokens) == (7, 1, 100, 10)
    recorder.close()


def test_held_events_are_stored_within_the_coalescing_time_when_nothing_follows(team: Team) -> None:
    """A long command: its call shows while it runs, not only once the step ends."""
    run = make_run(team, status=RunStatus.RUNNING)
    recorder = EventRecorder(run.pk, coalesce_seconds=0.05)
    call = ToolCall(step=1, call_id="c1", name="execute_bash", arguments={"command": "sleep 60"})
    recorder.record("tool_call", call, hold=True)
    deadline = time.monotonic() + 10
    while not RunEvent.objects.filter(run=run).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _kinds(run) == [(1, "tool_call")]
    recorder.close()


def test_held_events_and_their_usage_are_stored_at_close(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    recorder = EventRecorder(run.pk, coalesce_seconds=600)
    _step(recorder, 1)
    recorder.close()
    assert len(_kinds(run)) == 5
    run.refresh_from_db()
    assert (run.steps, run.prompt_tokens, run.completion_tokens) == (1, 100, 10)


def test_nothing_held_is_stored_or_counted_after_the_run_ended(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    recorder = EventRecorder(run.pk, coalesce_seconds=600)
    _step(recorder, 1)
    assert run_finish(run_id=run.pk, status=RunStatus.FAILED, reason="worker lost")
    recorder.close()
    assert [kind for _, kind in _kinds(run)] == ["status"]
    run.refresh_from_db()
    assert (run.steps, run.prompt_tokens) == (0, 0)
    assert recorder.ended


def test_only_a_runs_counters_can_be_added_to(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    recorder = EventRecorder(run.pk)
    with pytest.raises(ValueError, match="not a counter"):
        recorder.record("step_started", StepStarted(step=1, remaining=0), add={"status": 1})
    assert _kinds(run) == []
