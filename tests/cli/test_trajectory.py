"""A run's trajectory as the terminal shows it, from recorded events."""

from __future__ import annotations

import io

import pytest

from atelier_cli.trajectory import TrajectoryPrinter
from creations.events.schema import validate_event
from tests.cli.recorded import LONG_OUTPUT, RUN_EVENTS


def shown(events: list[tuple[str, dict]], *, colour: bool = False) -> str:
    out = io.StringIO()
    printer = TrajectoryPrinter(out, colour=colour)
    for kind, payload in events:
        printer.show(kind, payload)
    printer.end_line()
    return out.getvalue()


@pytest.mark.parametrize(("kind", "payload"), RUN_EVENTS)
def test_the_recorded_events_are_what_the_server_stores(kind: str, payload: dict) -> None:
    validate_event(kind, payload)


def test_it_shows_a_run_as_a_person_reads_it() -> None:
    text = shown(RUN_EVENTS)
    lines = text.splitlines()
    assert lines[:3] == ["● queued", "● starting", "● running"]
    assert "$ cat /testbed/input/places.csv" in lines
    assert "✎ create /testbed/output/map.html (2 lines)" in lines
    assert "$ ls /nowhere" in lines
    assert "  └ error, exit 2 · <0.1 s" in lines
    assert "→ submit" in lines
    assert "Agent finished (submitted): The map is in map.html." in lines
    assert "  map.html  html, 2.0 KB" in lines
    assert "  ✗ link: a symbolic link" in lines
    assert lines[-2:] == ["● succeeded — submitted", "  3 steps · 2,820 tokens · 14 s in the sandbox"]


def test_the_models_words_stream_once_even_though_the_whole_message_follows() -> None:
    text = shown(RUN_EVENTS)
    assert text.count("Let me look at the input.") == 1
    assert text.count("A map needs the data first.") == 1
    assert "(thinking) A map needs the data first.\nLet me look at the input.\n" in text
    # A step whose words did not stream shows the whole message.
    assert "\nNow the page.\n" in text


def test_a_commands_long_output_is_shortened_to_its_first_lines() -> None:
    text = shown(RUN_EVENTS)
    assert "  │ row 12\n" in text
    assert "row 13" not in text
    assert "  │ … 18 more lines\n  └ exit 0 · 0.2 s\n" in text


def test_output_that_did_not_stream_is_shortened_from_the_result() -> None:
    call = {"step": 1, "call_id": "x", "name": "execute_bash", "arguments": {"command": "seq 30"}}
    result = {**RUN_EVENTS[11][1], "call_id": "x", "output": LONG_OUTPUT}
    text = shown([("tool_call", call), ("tool_result", result)])
    assert "  │ row 1\n" in text
    assert "  │ row 12\n  │ … 18 more lines\n" in text


def test_a_payload_cut_to_fit_is_shown_by_its_start() -> None:
    call = {
        "step": 1,
        "call_id": "x",
        "name": "str_replace_editor",
        "arguments": '{"command": "create", "path": "/testbed/output/big.html", "file_text": "<html>',
        "truncated": True,
        "overflow": {"arguments": {"path": "run-events/1/x", "bytes": 900000}},
    }
    validate_event("tool_call", call)
    assert shown([("tool_call", call)]).startswith('→ str_replace_editor {"command": "create", "path"')


def test_unknown_kinds_and_odd_payloads_are_left_out() -> None:
    assert shown([("a_kind_from_the_future", {"x": 1}), ("step_started", "not an object")]) == ""  # type: ignore[list-item]


def test_colour_only_when_asked_for() -> None:
    assert "\033[" not in shown(RUN_EVENTS, colour=False)
    assert "\033[32;1m● succeeded" in shown(RUN_EVENTS, colour=True)
