"""A brief becomes a run on a real Celery worker, in a real gVisor sandbox,
driven by a scripted model over HTTP, watched live over a websocket."""

from __future__ import annotations

import json

import pytest

from creations.models import Artifact, ArtifactKind, RunStatus
from devstack.containers import run_containers
from devstack.scripted_model import ScriptedModel, bash, call, reply
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.support.events import verify_events
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, stored_events, submit, wait_for_final
from tests.support.wsclient import open_stream, read_events

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

MAKE_FILES = (
    "mkdir -p /testbed/output && cp /testbed/input/stops.csv /testbed/output/ && "
    "python3 -c \"from PIL import Image; Image.new('RGB', (8, 8), 'red').save('/testbed/output/red.png')\" && "
    "printf '<!doctype html><html><body><div id=map></div><script>L.map(\"map\")</script></body></html>' "
    "> /testbed/output/map.html && for i in 1 2 3; do echo line $i; done"
)
NOTES = "# Tokyo\n\n- Tsukiji\n- Ginza\n\nSee [the map](map.html).\n"


def test_a_brief_becomes_events_and_artifacts(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(
        team,
        scripted_model,
        [
            bash(MAKE_FILES, "Making the files."),
            reply(
                "",
                [
                    call(
                        "str_replace_editor",
                        {"command": "create", "path": "/testbed/output/notes.md", "file_text": NOTES},
                    )
                ],
            ),
            submit_reply("A map, a picture, notes and the stops."),
        ],
    )
    run = submit(
        team, endpoint, brief="a 3-day Tokyo food map", files={"stops.csv": b"name,lat,lon\nTsukiji,35.66,139.77\n"}
    )
    with open_stream(run_stack, run.pk, cookie=run_stack.cookie_for(team.viewer)) as ws:
        watched, closed = read_events(ws, timeout=120)
    run = wait_for_final(run, logs=run_stack.logs)

    assert run.status == RunStatus.SUCCEEDED, run.reason
    assert run.reason == "A map, a picture, notes and the stops."
    verify_events(
        run, must_emit={"status", "step_started", "tool_call", "tool_result", "usage", "finished", "artifacts"}
    )
    # The watcher saw exactly what is stored, in order, and the socket closed after the final event.
    stored = stored_events(run)
    assert [{k: e[k] for k in ("seq", "kind", "payload")} for e in watched] == stored
    assert [e["seq"] for e in stored] == list(range(1, len(stored) + 1))
    assert closed
    kinds = [e["kind"] for e in stored]
    assert kinds[0] == "status"
    assert stored[0]["payload"]["status"] == "starting"
    assert {"step_started", "tool_call", "tool_result", "usage", "finished", "artifacts"} <= set(kinds)
    assert stored[-1]["payload"] == {**stored[-1]["payload"], "status": "succeeded", "final": True}
    output = "".join(e["payload"]["text"] for e in stored if e["kind"] == "tool_output_delta")
    assert "line 1\nline 2\nline 3\n" in output

    artifacts = {a.path: a for a in Artifact.objects.filter(run=run)}
    assert {path: a.kind for path, a in artifacts.items()} == {
        "map.html": ArtifactKind.MAP,
        "notes.md": ArtifactKind.MARKDOWN,
        "red.png": ArtifactKind.IMAGE,
        "stops.csv": ArtifactKind.TEXT,
    }
    with artifacts["notes.md"].file.open("rb") as handle:
        assert handle.read().decode() == NOTES
    assert artifacts["red.png"].content_type == "image/png"
    listed = next(e for e in stored if e["kind"] == "artifacts")["payload"]["items"]
    assert sorted(item["path"] for item in listed) == sorted(artifacts)

    assert run.steps == 3
    assert run.prompt_tokens > 0
    assert run.completion_tokens > 0
    assert run.sandbox_seconds > 0
    assert run.output_bytes == sum(a.size for a in artifacts.values())
    assert run_containers(run.pk) == []
    # The model saw the person's brief.
    assert "a 3-day Tokyo food map" in json.dumps(scripted_model.chat_requests()[0].messages)


def test_a_run_that_never_submits_ends_at_its_step_limit_with_a_clear_reason(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [bash("echo still thinking")])
    run = wait_for_final(submit(team, endpoint, max_steps=2), logs=run_stack.logs)
    # Its own limit, not the workspace's quota: a status of its own, and it keeps its files.
    assert run.status == RunStatus.LIMIT_REACHED
    assert run.reason == "Stopped at this run's step limit (2 steps); the files made so far are kept."
    verify_events(run, must_emit={"status", "step_started", "tool_call", "tool_result", "finished", "artifacts"})
    assert run_containers(run.pk) == []


def test_a_run_past_its_wall_time_is_timed_out(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [bash("sleep 60")])
    run = wait_for_final(submit(team, endpoint, max_seconds=4), logs=run_stack.logs)
    assert run.status == RunStatus.TIMED_OUT
    assert run.reason == "Stopped at the time limit of 4 s."
    verify_events(run, must_emit={"status", "step_started", "tool_call", "finished"})
    assert run_containers(run.pk) == []
