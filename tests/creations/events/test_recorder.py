"""The event recorder: gapless, ordered, coalesced, capped, and closed once the run ends."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.db import connection

from creations.events.store import EventRecorder, store_events
from creations.models import Run, RunEvent, RunStatus
from creations.runs.state import run_finish
from sandboxes.agent.events import StepStarted, TextDelta, ToolCall, ToolOutputDelta, ToolResult
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db(transaction=True)


def _events(run: Run) -> list[RunEvent]:
    return list(RunEvent.objects.filter(run=run).order_by("seq"))


def _running(team: Team) -> Run:
    return make_run(team, status=RunStatus.RUNNING)


def _result(output: str, **fields: Any) -> dict[str, Any]:
    """A tool_result payload as the agent sends it (creations/events/schema.py)."""
    return {"step": 1, "call_id": "c1", "name": "execute_bash", "output": output, "is_error": False,
            "exit_code": 0, "duration": 0.5, **fields}  # fmt: skip


def test_events_get_gapless_seqs_in_the_order_they_happened(team: Team) -> None:
    run = _running(team)
    recorder = EventRecorder(run.pk)
    for step in range(1, 6):
        recorder.record("step_started", StepStarted(step=step, remaining=5 - step))
        recorder.record(
            "tool_call", ToolCall(step=step, call_id=f"c{step}", name="execute_bash", arguments={"command": "ls"})
        )
    recorder.close()
    events = _events(run)
    assert [e.seq for e in events] == list(range(1, 11))
    assert [e.payload["step"] for e in events] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    run.refresh_from_db()
    assert run.last_seq == 10


def test_a_flood_of_output_pieces_makes_few_rows_and_keeps_every_byte(team: Team) -> None:
    run = _running(team)
    recorder = EventRecorder(run.pk, coalesce_seconds=10, coalesce_bytes=8192)
    pieces = [f"line {i:05d}\n" for i in range(5000)]  # 55 KB in 5000 pieces
    for piece in pieces:
        recorder.record("tool_output_delta", ToolOutputDelta(step=1, call_id="c1", text=piece))
    recorder.record("tool_result", ToolResult(**_result("ok")))
    recorder.close()
    deltas = [e for e in _events(run) if e.kind == "tool_output_delta"]
    assert len(deltas) <= 8
    assert "".join(e.payload["text"] for e in deltas) == "".join(pieces)
    assert all(e.payload["call_id"] == "c1" for e in deltas)
    assert _events(run)[-1].kind == "tool_result"


def test_pending_output_is_stored_without_waiting_for_the_next_event(team: Team) -> None:
    run = _running(team)
    recorder = EventRecorder(run.pk, coalesce_seconds=0.05)
    recorder.record("tool_output_delta", ToolOutputDelta(step=1, call_id="c1", text="compiling…\n"))
    deadline = time.monotonic() + 10
    while not RunEvent.objects.filter(run=run).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    stored = _events(run)
    recorder.close()
    assert [(e.kind, e.payload["text"]) for e in stored] == [("tool_output_delta", "compiling…\n")]


def test_pieces_of_different_streams_are_not_merged(team: Team) -> None:
    run = _running(team)
    recorder = EventRecorder(run.pk, coalesce_seconds=10)
    recorder.record("assistant_delta", TextDelta(step=1, text="Let me "))
    recorder.record("assistant_delta", TextDelta(step=1, text="look."))
    recorder.record("tool_output_delta", ToolOutputDelta(step=1, call_id="a", text="A"))
    recorder.record("tool_output_delta", ToolOutputDelta(step=1, call_id="b", text="B"))
    recorder.close()
    assert [(e.kind, e.payload["text"]) for e in _events(run)] == [
        ("assistant_delta", "Let me look."),
        ("tool_output_delta", "A"),
        ("tool_output_delta", "B"),
    ]


def test_a_huge_payload_is_capped_and_the_whole_text_kept_as_a_file(team: Team, settings: Any) -> None:
    settings.RUN_EVENT_PAYLOAD_MAX_BYTES = 32 * 1024
    run = _running(team)
    output = "".join(f"row {i} " + "é" * 20 + "\n" for i in range(5000))  # ~150 KB, multi-byte
    store_events(run.pk, [("tool_result", _result(output, exit_code=0))])
    event = _events(run)[0]

    assert len(json.dumps(event.payload, ensure_ascii=False).encode()) <= 32 * 1024
    assert event.payload["truncated"] is True
    assert output.startswith(event.payload["output"])
    assert len(event.payload["output"]) > 1000
    assert event.payload["exit_code"] == 0
    overflow = event.payload["overflow"]["output"]
    with default_storage.open(overflow["path"]) as handle:
        assert handle.read().decode() == output
    assert overflow["bytes"] == len(output.encode())


def test_live_output_past_the_per_command_cap_is_left_out_and_said_so(team: Team) -> None:
    run = _running(team)
    recorder = EventRecorder(run.pk, coalesce_seconds=10, stream_max_per_call=10_000)
    for _ in range(100):
        recorder.record("tool_output_delta", ToolOutputDelta(step=1, call_id="c1", text="x" * 1000))
    recorder.record("tool_result", ToolResult(**_result("(truncated)")))
    recorder.close()
    events = _events(run)
    streamed = "".join(e.payload["text"] for e in events if e.kind == "tool_output_delta")
    assert streamed.startswith("x" * 10_000)
    assert "live output truncated" in streamed
    assert events[-1].payload["stream_omitted_bytes"] == 90_000


def test_a_run_that_streams_past_its_whole_run_cap_stores_no_more_live_text_and_says_so(team: Team) -> None:
    """Many commands each under the per-command cap still cannot fill the database with one run."""
    run = _running(team)
    recorder = EventRecorder(run.pk, coalesce_seconds=10, stream_max_per_call=50_000, stream_max_per_run=30_000)
    for call in range(10):
        for _ in range(10):
            recorder.record("tool_output_delta", ToolOutputDelta(step=call + 1, call_id=f"c{call}", text="y" * 1000))
        recorder.record("tool_result", ToolResult(**_result("(the model's view)", step=call + 1, call_id=f"c{call}")))
    recorder.record("assistant_delta", TextDelta(step=11, text="z" * 5000))
    recorder.close()
    events = _events(run)
    live = "".join(e.payload["text"] for e in events if e.kind in ("tool_output_delta", "assistant_delta"))
    kept, note = live.split("\n[live output stops here", 1)
    assert kept == "y" * 30_000
    assert "this run has streamed more than 30000 bytes" in note
    assert "y" * 10 not in note
    assert "z" * 10 not in note
    results = [e.payload for e in events if e.kind == "tool_result"]
    assert len(results) == 10  # every command's result is still kept
    assert [r.get("stream_omitted_bytes", 0) for r in results] == [0, 0, 0, 10_000, *[10_000] * 6]
    stored_bytes = sum(len(json.dumps(e.payload)) for e in events)
    assert stored_bytes < 40_000


def test_nothing_is_appended_after_the_final_event(team: Team) -> None:
    run = _running(team)
    recorder = EventRecorder(run.pk)
    recorder.record("step_started", StepStarted(step=1, remaining=9))
    assert run_finish(run_id=run.pk, status=RunStatus.FAILED, reason="worker lost")
    recorder.record("step_started", StepStarted(step=2, remaining=8))
    recorder.close()
    events = _events(run)
    assert [e.kind for e in events] == ["step_started", "status"]
    assert events[-1].payload["final"] is True
    assert events[-1].payload["status"] == "failed"
    assert recorder.ended


def test_concurrent_writers_never_share_or_skip_a_seq(team: Team) -> None:
    run = _running(team)

    def write(tag: str) -> None:
        try:
            for i in range(25):
                store_events(
                    run.pk,
                    [
                        ("tool_output_delta", {"step": i, "call_id": tag, "text": "1"}),
                        ("tool_output_delta", {"step": i, "call_id": tag, "text": "2"}),
                    ],
                )
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seqs = [e.seq for e in _events(run)]
    assert seqs == list(range(1, 201))
    for tag in ("t0", "t1", "t2", "t3"):  # each writer's batch stayed together and in order
        mine = [(e.payload["step"], int(e.payload["text"])) for e in _events(run) if e.payload["call_id"] == tag]
        assert mine == [(i, h) for i in range(25) for h in (1, 2)]
