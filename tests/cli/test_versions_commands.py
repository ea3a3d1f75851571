"""`atelier refine`, `atelier say` and `atelier versions` against an API answered in memory:
a refine retried after a lost answer asks for one version; telling an agent that has ended
says what to type instead; the versions table marks the one shown. The real stack's
end-to-end test is tests/cli/test_cli_versions.py."""

from __future__ import annotations

import argparse
import io
import json
from typing import Any

import httpx
import pytest

from atelier_cli.answers import Version
from atelier_cli.commands import say, versions
from atelier_cli.commands.refine import run_refine
from atelier_cli.commands.versions import versions_table
from atelier_cli.errors import ApiError, CliError
from atelier_cli.trajectory import TrajectoryPrinter
from creations.events.schema import validate_event
from tests.cli.fake_api import FakeApi, run_answer

PROBLEM = {"Content-Type": "application/problem+json"}


def problem(status: int, detail: str) -> httpx.Response:
    return httpx.Response(status, headers=PROBLEM, json={"title": "x", "status": status, "detail": detail})


def test_a_refine_retried_after_a_lost_answer_sends_the_same_key() -> None:
    answers = iter(["lost", "created"])

    def refine(request: httpx.Request) -> httpx.Response:
        if next(answers) == "lost":
            raise httpx.ReadTimeout("timed out", request=request)
        return httpx.Response(201, json=run_answer(8, version=2, parent_id=7))

    api = FakeApi({("POST", "/runs/7/refine"): refine})
    assert run_refine(api.client(), 7, "make the title bigger").version == 2
    first, retry = api.sent("POST", "/runs/7/refine")
    assert first.headers["Idempotency-Key"] == retry.headers["Idempotency-Key"]
    assert first.read() == retry.read() == b'{"instruction":"make the title bigger"}'


def _say(api: FakeApi, monkeypatch: pytest.MonkeyPatch, run_id: int = 7) -> int:
    monkeypatch.setattr(say, "api_client", api.client)
    return say.run(argparse.Namespace(run_id=run_id, text="sign it", json=False))


def test_telling_an_agent_that_has_ended_says_to_refine_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    ended = "v1 has ended, so nobody would read this. Refine it to ask for a change."
    api = FakeApi(
        {
            ("POST", "/runs/7/messages"): lambda request: problem(409, ended),
            ("GET", "/runs/7"): lambda request: httpx.Response(200, json=run_answer(7, is_final=True)),
        }
    )
    with pytest.raises(CliError) as caught:
        _say(api, monkeypatch)
    assert str(caught.value) == f'{ended} For a new version: atelier refine 7 "…"'


def test_a_refusal_while_the_run_goes_on_is_the_servers_sentence_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    waiting = "20 messages are already waiting for the agent's next step; send more once it has read them."
    api = FakeApi(
        {
            ("POST", "/runs/7/messages"): lambda request: problem(409, waiting),
            ("GET", "/runs/7"): lambda request: httpx.Response(200, json=run_answer(7, is_final=False)),
        }
    )
    with pytest.raises(ApiError) as caught:
        _say(api, monkeypatch)
    assert str(caught.value) == waiting


def test_a_message_sent_is_confirmed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    sent = {"id": 1, "run_id": 7, "text": "sign it", "delivered": False}
    api = FakeApi({("POST", "/runs/7/messages"): lambda request: httpx.Response(201, json=sent)})
    assert _say(api, monkeypatch) == 0
    assert capsys.readouterr().out.startswith("Sent to run 7: its agent reads it before its next step")
    assert api.sent("POST", "/runs/7/messages")[0].read() == b'{"text":"sign it"}'


def version(number: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": 40 + number,
        "version": number,
        "parent_version": number - 1 if number > 1 else None,
        "asked_by": "bob",
        "status": "succeeded",
        "created_at": "2026-03-01T10:00:00+00:00",
        "instruction": "",
        "shown": False,
        **fields,
    }


def test_the_versions_table_marks_the_one_shown_and_where_each_came_from() -> None:
    rows = [
        version(3, instruction="make it green " * 20, parent_version=1, status="running"),
        version(2, instruction="make the title bigger", shown=True),
        version(1, asked_by=None),
    ]
    lines = versions_table([Version.model_validate(row) for row in rows], width=100).splitlines()
    assert lines[0].split() == ["VERSION", "RUN", "STATUS", "FROM", "ASKED", "BY", "CREATED", "INSTRUCTION"]
    assert lines[1].split()[:5] == ["v3", "43", "running", "v1", "bob"]
    assert lines[1].endswith("…")
    assert len(lines[1]) == 100
    assert lines[2].split()[:5] == ["*v2", "42", "succeeded", "v1", "bob"]
    assert lines[2].endswith("make the title bigger")
    assert lines[3].split()[:5] == ["v1", "41", "succeeded", "brief", "—"]
    assert lines[3].endswith("(the brief)")


def test_a_scheduled_refresh_that_changed_nothing_says_unchanged() -> None:
    rows = [version(3, parent_version=2), version(2, instruction="update the figures", unchanged=True)]
    lines = versions_table([Version.model_validate(row) for row in rows], width=100).splitlines()
    assert lines[1].split()[:3] == ["v3", "43", "succeeded"]
    assert lines[2].split()[:3] == ["v2", "42", "unchanged"]


def test_a_persons_message_is_shown_as_the_agent_got_it() -> None:
    payload = {"step": 2, "author": "bob", "text": "Please sign it\nwith our team name."}
    validate_event("person_message", payload)
    out = io.StringIO()
    TrajectoryPrinter(out, colour=False).show("person_message", payload)
    assert out.getvalue() == "✉ bob: Please sign it with our team name.\n"


def test_versions_as_json_are_the_apis_answer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = {"creation_id": 3, "title": "Poster", "brief": "a poster", "shown_run_id": 41, "versions": [version(1)]}
    api = FakeApi({("GET", "/runs/41/versions"): lambda request: httpx.Response(200, json=answer)})
    monkeypatch.setattr(versions, "api_client", api.client)
    assert versions.run(argparse.Namespace(run_id=41, json=True)) == 0
    assert json.loads(capsys.readouterr().out) == answer
