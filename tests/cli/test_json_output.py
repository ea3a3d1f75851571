"""`--json` on every command: stdout is one JSON document with the keys the README's CLI
section names (JSON Lines while a run is followed), and nothing else; stderr holds JSON
too. Against the platform's real API in this process; following a run's live stream,
against an API answered in memory (the real stream's end to end: tests/cli/test_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from creations.models import Run, RunMessage, RunStatus
from tests.cli.fake_api import FakeApi, followed_run, run_answer
from tests.cli.recorded import RUN_EVENTS
from tests.cli.running import Atelier, AtelierOn, Outcome
from tests.support.api import token_for
from tests.support.artifacts import Output, finished_run
from tests.support.factories import ModelEndpointFactory, make_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db

# The keys the README promises for each object (the API's objects carry these and more).
RUN_KEYS = {
    "id",
    "creation_id",
    "version",
    "parent_id",
    "workspace",
    "title",
    "brief",
    "status",
    "reason",
    "is_final",
    "model",
    "created_at",
    "web_url",
}
VERSIONS_KEYS = {"creation_id", "title", "brief", "shown_run_id", "versions"}
VERSION_KEYS = {"id", "version", "parent_id", "parent_version", "asked_by", "instruction", "status", "shown"}
MESSAGE_KEYS = {"id", "run_id", "text", "author", "created_at", "delivered"}
WORKSPACE_KEYS = {"slug", "name", "is_personal", "role", "quota"}
EVENT_KEYS = {"seq", "kind", "payload", "at"}
FILE_KEYS = {"artifact_id", "path", "saved_to", "size", "sha256", "verified"}


def only_json_notices(outcome: Outcome) -> list[str]:
    """stderr's notices, each line a JSON object of its own."""
    notices = [json.loads(line) for line in outcome.err.splitlines()]
    assert all(set(notice) == {"notice"} for notice in notices), outcome.err
    return [notice["notice"] for notice in notices]


@pytest.fixture
def member(team: Team) -> str:
    return token_for(team.member)


@pytest.fixture
def ended(team: Team) -> Run:
    run = finished_run(workspace=team.workspace, author=team.member, outputs=[Output("poster.svg", b"<svg/>")])
    # The team's own model, which takes any instruction (the demo model only replays recorded ones).
    run.creation.model_endpoint = ModelEndpointFactory.create(workspace=team.workspace)
    run.creation.save(update_fields=["model_endpoint"])
    return run


def test_runs_is_a_list_of_runs(atelier_on_platform: Atelier, member: str, ended: Run) -> None:
    outcome = atelier_on_platform("runs", "--json", token=member)
    assert outcome.status == 0
    (listed,) = outcome.document()
    assert set(listed) >= RUN_KEYS
    assert (listed["id"], listed["status"], listed["is_final"]) == (ended.pk, "succeeded", True)
    assert outcome.err == ""


def test_no_runs_is_an_empty_list(atelier_on_platform: Atelier, member: str) -> None:
    assert atelier_on_platform("runs", "--status", "running", "--json", token=member).document() == []


def test_create_is_the_run_made_and_its_upload_a_json_notice(
    atelier_on_platform: Atelier, member: str, team: Team, tmp_path: Path
) -> None:
    (tmp_path / "stops.csv").write_text("name,lat,lon\n")
    args = [
        "create",
        "a map of these stops",
        "--workspace",
        team.workspace.slug,
        "--input",
        str(tmp_path / "stops.csv"),
    ]
    outcome = atelier_on_platform(*args, "--json", token=member)
    assert outcome.status == 0, outcome.err
    made = outcome.document()
    assert set(made) >= RUN_KEYS
    run = Run.objects.get(pk=made["id"])
    assert (run.creation.brief, made["status"], made["version"]) == ("a map of these stops", RunStatus.QUEUED, 1)
    assert [file.name for file in run.creation.inputs.all()] == ["stops.csv"]
    assert only_json_notices(outcome) == ["Uploading 1 input file(s) (13 B)…"]


def test_refine_is_the_new_version(atelier_on_platform: Atelier, member: str, ended: Run) -> None:
    outcome = atelier_on_platform("refine", str(ended.pk), "make the title bigger", "--json", token=member)
    assert outcome.status == 0, outcome.err
    refined = outcome.document()
    assert set(refined) >= RUN_KEYS
    assert (refined["version"], refined["parent_id"]) == (2, ended.pk)
    assert Run.objects.get(pk=refined["id"]).instruction == "make the title bigger"


def test_cancel_is_the_run_as_it_stops(atelier_on_platform: Atelier, team: Team) -> None:
    going = make_run(team, status=RunStatus.QUEUED)
    outcome = atelier_on_platform("cancel", str(going.pk), "--json", token=token_for(team.owner))
    assert outcome.status == 0, outcome.err
    cancelled = outcome.document()
    assert set(cancelled) >= RUN_KEYS
    assert cancelled["id"] == going.pk


def test_say_is_the_message_sent(atelier_on_platform: Atelier, member: str, team: Team) -> None:
    going = make_run(team, status=RunStatus.RUNNING)
    outcome = atelier_on_platform("say", str(going.pk), "sign it", "--json", token=member)
    assert outcome.status == 0, outcome.err
    sent = outcome.document()
    assert set(sent) >= MESSAGE_KEYS
    assert (sent["run_id"], sent["text"], sent["delivered"]) == (going.pk, "sign it", False)
    assert RunMessage.objects.get(pk=sent["id"]).text == "sign it"


def test_versions_is_the_creation_and_its_versions(atelier_on_platform: Atelier, member: str, ended: Run) -> None:
    outcome = atelier_on_platform("versions", str(ended.pk), "--json", token=member)
    assert outcome.status == 0, outcome.err
    found = outcome.document()
    assert set(found) >= VERSIONS_KEYS
    (version,) = found["versions"]
    assert set(version) >= VERSION_KEYS
    assert (found["creation_id"], version["id"], version["version"]) == (ended.creation_id, ended.pk, 1)


def test_login_is_the_server_where_it_was_saved_and_the_workspaces(
    atelier_on_platform: Atelier, member: str, team: Team
) -> None:
    # The platform in this process, over plain http as the test client speaks it.
    outcome = atelier_on_platform(
        "login", "--url", "http://testserver/", "--insecure", "--json", token=None, stdin=member + "\n"
    )
    assert outcome.status == 0, outcome.err
    logged_in = outcome.document()
    assert set(logged_in) == {"url", "saved_to", "workspaces"}
    assert logged_in["url"] == "http://testserver"
    assert json.loads(Path(logged_in["saved_to"]).read_text())["token"] == member
    assert all(set(workspace) >= WORKSPACE_KEYS for workspace in logged_in["workspaces"])
    assert team.workspace.slug in [workspace["slug"] for workspace in logged_in["workspaces"]]


def test_follow_is_json_lines_the_run_each_event_the_files_and_the_final_run(
    atelier_on: AtelierOn, tmp_path: Path
) -> None:
    succeeded = run_answer(5, status="succeeded", reason="submitted", is_final=True)
    api = followed_run(5, RUN_EVENTS, succeeded, artifacts={"map.html": b"<p>map</p>"})
    outcome = atelier_on(api.transport())("follow", "5", "--output", str(tmp_path / "out"), "--json")
    assert outcome.status == 0, outcome.err
    records = outcome.records()
    assert [record["type"] for record in records] == ["run"] + ["event"] * len(RUN_EVENTS) + ["files", "final"]
    first, *events, files, final = records
    assert set(first["run"]) >= RUN_KEYS
    assert all(set(record["event"]) >= EVENT_KEYS for record in events)
    assert [record["event"]["seq"] for record in events] == list(range(1, len(RUN_EVENTS) + 1))
    assert [(record["event"]["kind"], record["event"]["payload"]) for record in events] == RUN_EVENTS
    (saved,) = files["files"]
    assert set(saved) == FILE_KEYS
    assert (saved["path"], saved["verified"]) == ("map.html", True)
    assert Path(saved["saved_to"]).read_bytes() == b"<p>map</p>"
    assert (final["run"]["status"], final["run"]["is_final"]) == ("succeeded", True)
    assert outcome.err == ""


def test_create_with_wait_is_json_lines_from_the_run_made(atelier_on: AtelierOn) -> None:
    succeeded = run_answer(9, status="succeeded", is_final=True)
    api = followed_run(9, RUN_EVENTS, succeeded)
    api.routes["POST", "/workspaces/ana/runs"] = lambda request: httpx.Response(201, json=run_answer(9))
    outcome = atelier_on(api.transport())("create", "a map", "--workspace", "ana", "--wait", "--json")
    assert outcome.status == 0, outcome.err
    records = outcome.records()
    assert (records[0]["type"], records[0]["run"]["status"]) == ("run", "queued")
    assert (records[-1]["type"], records[-1]["run"]["status"]) == ("final", "succeeded")
    assert {record["type"] for record in records[1:-1]} == {"event"}


def test_a_lost_connection_while_following_is_a_json_notice(atelier_on: AtelierOn) -> None:
    from tests.cli.fake_api import DroppedStream
    from tests.cli.recorded import numbered, sse_body

    events = numbered(RUN_EVENTS)
    streams = iter(
        [
            httpx.Response(
                200, headers={"Content-Type": "text/event-stream"}, stream=DroppedStream(sse_body(events[:5]))
            ),
            httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=sse_body(events[5:])),
        ]
    )
    api = FakeApi(
        {
            ("GET", "/runs/5"): lambda request: httpx.Response(
                200, json=run_answer(5, status="succeeded", is_final=True)
            ),
            ("GET", "/runs/5/events/stream"): lambda request: next(streams),
        }
    )
    outcome = atelier_on(api.transport())("follow", "5", "--json")
    assert outcome.status == 0
    (notice,) = only_json_notices(outcome)
    assert notice.startswith("Connection lost (the connection closed unexpectedly")
    assert len([record for record in outcome.records() if record["type"] == "event"]) == len(RUN_EVENTS)
