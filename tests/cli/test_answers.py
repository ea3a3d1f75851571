"""The API's answers as the client types them: every field it checks is one the API's schema
sends, and a reply that is not what the API sends ends the command with the server-error
status and a sentence naming what was wrong, never a trace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from api.schemas.artifacts import ArtifactOut
from api.schemas.events import EventOut
from api.schemas.inputs import StagedInputOut
from api.schemas.messages import MessageOut
from api.schemas.runs import RunOut
from api.schemas.versions import VersionOut, VersionsOut
from api.schemas.workspaces import WorkspaceOut
from atelier_cli import answers
from atelier_cli.exit_status import ExitStatus
from tests.cli.fake_api import FakeApi, followed_run, run_answer
from tests.cli.recorded import RUN_EVENTS
from tests.cli.running import AtelierOn

pytestmark = pytest.mark.django_db

SCHEMAS: list[tuple[type[answers.Answer], type[BaseModel]]] = [
    (answers.Workspace, WorkspaceOut),
    (answers.Run, RunOut),
    (answers.Version, VersionOut),
    (answers.Versions, VersionsOut),
    (answers.Artifact, ArtifactOut),
    (answers.StagedInput, StagedInputOut),
    (answers.Message, MessageOut),
    (answers.RunEvent, EventOut),
]


@pytest.mark.parametrize(("typed", "schema"), SCHEMAS, ids=lambda shape: shape.__name__)
def test_every_field_the_client_checks_is_one_the_api_sends(typed: type[BaseModel], schema: type[BaseModel]) -> None:
    assert set(typed.model_fields) <= set(schema.model_fields)


def test_the_fake_run_has_every_field_of_the_apis() -> None:
    assert set(run_answer(1)) == set(RunOut.model_fields)


def test_json_keeps_the_answer_as_it_came_fields_the_client_does_not_check_too() -> None:
    answer = run_answer(4, steps=3, some_later_field={"x": 1})
    run = answers.RUN.validate_python(answer)
    assert (run.id, run.is_final, run.created_at.year) == (4, False, 2026)
    assert run.as_json() == answer


def answering(path: str, body: Any, method: str = "GET") -> Callable[[], FakeApi]:
    return lambda: FakeApi({(method, path): lambda request: httpx.Response(200, json=body)})


def not_json(path: str, method: str = "GET") -> Callable[[], FakeApi]:
    page = "<html>Sign in to the corporate proxy</html>"
    return lambda: FakeApi({(method, path): lambda request: httpx.Response(200, text=page)})


def files_without_sizes() -> FakeApi:
    api = followed_run(5, RUN_EVENTS, run_answer(5, status="succeeded", is_final=True))
    listing = [{"id": 1, "path": "map.html", "sha256": None}]
    api.routes["GET", "/runs/5/artifacts"] = lambda request: httpx.Response(200, json=listing)
    return api


MALFORMED: dict[str, tuple[Callable[[], FakeApi], list[str], str]] = {
    "runs: a page without results": (answering("/runs", {"next": None}), ["runs"], "results: Field required"),
    "runs: a run whose id is a word": (
        answering("/runs", {"results": [run_answer(3, id="three")]}),
        ["runs"],
        "results.0.id: Input should be a valid integer",
    ),
    "versions: a version without its number": (
        answering(
            "/runs/3/versions",
            {"creation_id": 1, "title": "", "brief": "b", "versions": [{"id": 3, "status": "succeeded"}]},
        ),
        ["versions", "3"],
        "versions.0.version: Field required",
    ),
    "cancel: a page that is not JSON": (not_json("/runs/3/cancel", "POST"), ["cancel", "3"], "it is not JSON"),
    "say: a list for a message": (
        answering("/runs/3/messages", [], "POST"),
        ["say", "3", "hello"],
        "the answer: Input should be a valid dictionary",
    ),
    "create: a run whose is_final is not a yes or no": (
        answering("/workspaces/ana/runs", run_answer(9, is_final="perhaps"), "POST"),
        ["create", "a map", "--workspace", "ana"],
        "is_final: Input should be a valid boolean",
    ),
    "follow: a run with no status": (
        answering("/runs/5", {key: value for key, value in run_answer(5).items() if key != "status"}),
        ["follow", "5"],
        "status: Field required",
    ),
    "follow --output: files listed without their sizes": (
        files_without_sizes,
        ["follow", "5", "--output", "made"],
        "0.size: Field required",
    ),
    "login: an object for the list of workspaces": (
        answering("/workspaces", {"slug": "ana"}),
        ["login", "--url", "https://atelier.test"],
        "the answer: Input should be a valid list",
    ),
}


@pytest.mark.parametrize("as_json", [False, True], ids=["words", "json"])
@pytest.mark.parametrize(("api", "args", "names"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_reply_is_a_server_error_naming_what_is_wrong(
    atelier_on: AtelierOn,
    api: Callable[[], FakeApi],
    args: list[str],
    names: str,
    as_json: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    outcome = atelier_on(api().transport())(*args, *(["--json"] if as_json else []), stdin="atl_test\n")
    assert outcome.status == ExitStatus.SERVER_ERROR
    message = outcome.error()["message"] if as_json else outcome.err.splitlines()[-1]
    assert "is not what the Atelier API sends" in message
    assert names in message
    if not as_json:
        assert message.startswith("Error: The server's answer to ")


def test_an_event_the_client_cannot_read_is_left_out_not_fatal(atelier_on: AtelierOn) -> None:
    odd = [("step_started", "not an object"), *RUN_EVENTS]
    api = followed_run(5, odd, run_answer(5, status="succeeded", is_final=True))  # type: ignore[arg-type]
    outcome = atelier_on(api.transport())("follow", "5", "--json")
    assert outcome.status == ExitStatus.OK
    events = [record["event"] for record in outcome.records() if record["type"] == "event"]
    assert [event["seq"] for event in events] == list(range(2, len(odd) + 1))
