"""What the server sends (a model's words, an agent's commands and what they printed,
file names, titles, an error's detail) reaches the terminal without escape sequences or
control characters, whichever command prints it: a model could otherwise clear the
screen, retitle the window, plant a hyperlink or forge a line of the client's own.
With --json each string arrives whole, its control characters escaped."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from atelier_cli.terminal import printable
from atelier_cli.trajectory import TrajectoryPrinter
from tests.cli.fake_api import FakeApi, followed_run, run_answer
from tests.cli.recorded import RUN_EVENTS
from tests.cli.running import AtelierOn
from tests.cli.terminal_safety import CONTROL, ESCAPES

OWN_COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def assert_printable(text: str, *, own_colours: bool = False) -> None:
    """Nothing a terminal acts on, but the client's own colours when it uses them."""
    left = OWN_COLOURS.sub("", text) if own_colours else text
    assert not CONTROL.search(left), repr(left)


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("a\x1b[2J\x1b[Hb", "ab"),  # clear the screen, cursor home
        ("\x1b]0;a title\x07ok", "ok"),  # the window's title, ended by BEL
        ("\x1b]8;;http://evil.test/\x1b\\link\x1b]8;;\x1b\\", "link"),  # a hyperlink, ended by ST
        ("\x1b]52;c;cm0gLXJmIH4=\x07ok", "ok"),  # a clipboard write
        ("a\x9b2Jb", "ab"),  # 8-bit CSI
        ("a\x9d0;title\x9cb", "ab"),  # 8-bit OSC and ST
        ("a\x1bP1$r\x1b\\b", "ab"),  # DCS
        ("a\x1b_private\x1b\\b", "ab"),  # APC
        ("a\x1bcb", "ab"),  # full reset
        ("a\x1b(0b", "ab"),  # line-drawing character set
        ("a\x1b[3", "a"),  # cut short at the end (a stream's chunk)
        ("a\x1b]0;a ti", "a"),
        ("a\x00\x07\x08\x0b\x0c\r\x1ab\x1b", "ab"),  # C0, a lone ESC at the end too
        ("a\x7f\x85\x8db", "ab"),  # DEL and C1
        ("a\n\tb", "a\n\tb"),  # newline and tab stay
        ("café — 東京 ✓ 🙂", "café — 東京 ✓ 🙂"),
    ],
)
def test_printable_keeps_the_words_and_drops_what_a_terminal_acts_on(sent: str, shown: str) -> None:
    assert printable(sent) == shown


def _poisoned(value: Any, *, numbers: bool) -> Any:
    """`value` with ESCAPES around every string in it (and, with `numbers`, in place of every number)."""
    if isinstance(value, dict):
        return {key: _poisoned(item, numbers=numbers) for key, item in value.items()}
    if isinstance(value, list):
        return [_poisoned(item, numbers=numbers) for item in value]
    if isinstance(value, str):
        return f"{ESCAPES}{value}{ESCAPES}"
    if numbers and isinstance(value, int | float) and not isinstance(value, bool):
        return ESCAPES
    return value


def shown(events: list[tuple[str, dict[str, Any]]], *, colour: bool) -> str:
    out = io.StringIO()
    printer = TrajectoryPrinter(out, colour=colour)
    for kind, payload in events:
        printer.show(kind, payload)
    printer.end_line()
    return out.getvalue()


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
@pytest.mark.parametrize("numbers", [False, True], ids=["strings", "numbers-too"])
def test_every_field_of_every_event_reaches_the_terminal_printable(colour: bool, numbers: bool) -> None:
    events = [(kind, _poisoned(payload, numbers=numbers)) for kind, payload in RUN_EVENTS]

    text = shown(events, colour=colour)

    assert_printable(text, own_colours=colour)
    words = OWN_COLOURS.sub("", text).replace("click", "")  # what is left of ESCAPES: its hyperlink's text
    for said in ("Let me look at the input.", "The map is in map.html.", "  map.html", "a symbolic link", "│ row 2"):
        assert said in words, said


def test_a_progress_bar_shows_its_last_state_without_its_carriage_returns() -> None:
    call = {"step": 1, "call_id": "x", "name": "execute_bash", "arguments": {"command": "pip install x"}}
    output = {"step": 1, "call_id": "x", "text": "10%\r50%\r\x1b[1mdone\x1b[0m\n"}
    result = {"step": 1, "call_id": "x", "name": "execute_bash", "output": "", "is_error": False, "exit_code": 0}

    text = shown([("tool_call", call), ("tool_output_delta", output), ("tool_result", result)], colour=False)

    assert "  │ done\n" in text
    assert_printable(text)


FINAL = run_answer(
    5, status="failed", reason=f"{ESCAPES}The model stopped answering.", is_final=True, title=f"{ESCAPES}A poster"
)
# A name as a model may give a file (a backslash would be refused as a path).
ARTIFACT = "\x1b]0;pwned\x07\x9b31mnotes\x1b[0m.txt"


def hostile_run() -> FakeApi:
    events = [(kind, _poisoned(payload, numbers=False)) for kind, payload in RUN_EVENTS]
    return followed_run(5, events, FINAL, artifacts={ARTIFACT: b"notes"})


def test_following_a_run_prints_nothing_a_terminal_acts_on(atelier_on: AtelierOn, tmp_path: Path) -> None:
    outcome = atelier_on(hostile_run().transport())("follow", "5", "--output", str(tmp_path / "made"))

    assert outcome.status == 1
    assert_printable(outcome.out)
    assert_printable(outcome.err)
    assert "clickThe map is in map.html.click" in outcome.out
    assert "notes.txt  ✓ 5 B, sha256 verified" in outcome.out
    assert "Run 5 ended failed: clickThe model stopped answering." in outcome.err
    assert (tmp_path / "made" / ARTIFACT).read_bytes() == b"notes"  # the file keeps the name it was given


def test_with_json_every_string_arrives_whole_and_escaped(atelier_on: AtelierOn, tmp_path: Path) -> None:
    outcome = atelier_on(hostile_run().transport())("follow", "5", "--output", str(tmp_path / "made"), "--json")

    assert outcome.status == 1
    assert_printable(outcome.out)
    assert_printable(outcome.err)
    assert "\\u009b31m" in outcome.out
    assert "\\u001b[2J" in outcome.out
    records = outcome.records()
    final = records[-1]["run"]
    assert (final["title"], final["reason"]) == (FINAL["title"], FINAL["reason"])
    files = next(record for record in records if record["type"] == "files")
    assert [file["path"] for file in files["files"]] == [ARTIFACT]
    assert outcome.error()["message"] == f"Run 5 ended failed: {FINAL['reason']}"


def test_tables_and_errors_from_the_server_print_nothing_a_terminal_acts_on(atelier_on: AtelierOn) -> None:
    page = {
        "results": [run_answer(7, title=f"{ESCAPES}A poster", model=f"{ESCAPES}gpt", workspace=f"{ESCAPES}ana")],
        "next": None,
    }
    versions = {
        "creation_id": 3,
        "title": f"{ESCAPES}A poster",
        "brief": "a poster",
        "shown_run_id": 7,
        "versions": [
            {
                "id": 7,
                "version": 1,
                "parent_id": None,
                "parent_version": None,
                "asked_by": f"{ESCAPES}ana",
                "status": f"{ESCAPES}succeeded",
                "created_at": "2026-03-01T10:00:00+00:00",
                "instruction": f"{ESCAPES}bigger",
                "shown": True,
            }
        ],
    }
    problem = {"title": "Conflict", "status": 409, "detail": f"{ESCAPES}This run has already ended."}
    api = FakeApi(
        {
            ("GET", "/runs"): lambda request: httpx.Response(200, json=page),
            ("GET", "/runs/7/versions"): lambda request: httpx.Response(200, json=versions),
            ("POST", "/runs/7/cancel"): lambda request: httpx.Response(409, json=problem),
        }
    )
    atelier = atelier_on(api.transport())

    listed, versioned, refused = atelier("runs"), atelier("versions", "7"), atelier("cancel", "7")

    assert (listed.status, versioned.status, refused.status) == (0, 0, 6)
    for outcome in (listed, versioned, refused):
        assert_printable(outcome.out)
        assert_printable(outcome.err)
    assert re.search(r"^7 +queued +clickana .* clickgpt +clickA poster$", listed.out, re.MULTILINE), listed.out
    assert "Creation 3: clickA poster" in versioned.out
    assert "clicksucceeded" in versioned.out
    assert "clickbigger" in versioned.out
    assert refused.err == "Error: clickThis run has already ended.\n"
    as_json = atelier("cancel", "7", "--json")
    assert as_json.error()["message"] == problem["detail"]
    assert_printable(as_json.err)


def test_notices_print_nothing_a_terminal_acts_on(atelier_on: AtelierOn) -> None:
    failing = run_answer(5, status="running")
    api = FakeApi(
        {
            ("GET", "/runs/5"): lambda request: httpx.Response(200, json=failing),
            ("GET", "/runs/5/events/stream"): lambda request: httpx.Response(
                429, headers={"Retry-After": "1"}, json={"detail": f"{ESCAPES}slow down", "status": 429}
            ),
        }
    )

    outcome = atelier_on(api.transport())("follow", "5")

    assert outcome.status == 7
    assert "The server asks us to slow down" in outcome.err
    assert_printable(outcome.err)
    assert "Error: clickslow down" in outcome.err
