"""A creation's versions on the real stack: a refine continues in a sandbox holding the
previous version's whole /testbed, with the conversation so far, on a real Celery worker
in gVisor, driven by the scripted model over HTTP; a person talks to a running agent."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Any

import httpx
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from creations.models import Artifact, Creation, InputFile, Run, RunEvent, RunSnapshot, RunStatus
from creations.runs.messages import run_message_send
from creations.runs.services import creation_delete, creation_submit, run_refine
from creations.usage.selectors import workspace_storage_bytes
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from sandboxes.agent import SHOWCASE_BRIEFS, demo_follow_ups
from tests.support.fixtures.accounts import Team
from tests.support.runs import held_until, per_task, scripted_endpoint, submit, wait_for_final, wait_until

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BRIEF = "a poster for the summer fair"
# The agent's helper script: it stays in /testbed, and the next version edits and re-runs it.
MAKE_POSTER = (
    "mkdir -p /testbed/work /testbed/output && cat > /testbed/work/make_poster.py <<'PY'\n"
    "SIZE = 40\n"
    "svg = ('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"300\">'\n"
    "       '<rect width=\"400\" height=\"300\" fill=\"white\"/>'\n"
    "       f'<text x=\"20\" y=\"80\" font-size=\"{SIZE}\">Summer fair</text></svg>')\n"
    "open('/testbed/output/poster.svg', 'w').write(svg)\n"
    "PY\n"
    "python3 /testbed/work/make_poster.py && echo V1-TOOL-OUTPUT-MARKER"
)
V1_SUMMARY = "A poster: the title Summer fair at 40 px on white, made by /testbed/work/make_poster.py."
BIGGER = "make the title bigger"
V2_CHANGE = "sed -i 's/^SIZE = 40/SIZE = 80/' /testbed/work/make_poster.py && python3 /testbed/work/make_poster.py"
LOOK = "ls -R /testbed"


def conversations_for(model: ScriptedModel, text: str) -> list[dict[str, Any]]:
    """The chat requests whose last user-side task mentions `text`, in order."""
    return [r.body for r in model.chat_requests() if text in json.dumps(r.body.get("messages", []))]


def tool_outputs(run_id: int) -> list[str]:
    return [e.payload["output"] for e in RunEvent.objects.filter(run_id=run_id, kind="tool_result").order_by("seq")]


def poster_of(run_id: int) -> bytes:
    artifact = Artifact.objects.get(run_id=run_id, path="poster.svg")
    with artifact.file.open("rb") as handle:
        return handle.read()


def test_a_refine_continues_from_the_previous_version_and_a_branch_from_an_older_one(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [])
    scripted_model.exhausted = per_task(
        {
            BIGGER: [bash(LOOK), bash(V2_CHANGE), submit_reply("The same poster with the title at 80 px.")],
            "the title green": [bash(LOOK), submit_reply("Nothing changed yet.")],
            BRIEF: [bash(MAKE_POSTER), submit_reply(V1_SUMMARY)],
        }
    )
    v1 = wait_for_final(submit(team, endpoint, brief=BRIEF), logs=run_stack.logs)
    assert v1.status == RunStatus.SUCCEEDED, v1.reason
    assert (v1.version, v1.summary) == (1, V1_SUMMARY)
    assert RunSnapshot.objects.get(run=v1).left_out == ""

    v2 = wait_for_final(run_refine(run=v1, user=team.member, instruction=BIGGER), logs=run_stack.logs)
    assert v2.status == RunStatus.SUCCEEDED, v2.reason
    assert (v2.version, v2.parent_id, v2.instruction, v2.started_by) == (2, v1.pk, BIGGER, team.member)

    # Its first command saw v1's whole /testbed: the helper script and the poster.
    first_look = tool_outputs(v2.pk)[0]
    assert "make_poster.py" in first_look
    assert "poster.svg" in first_look
    # The model got the brief, v1's own summary and the instruction, and none of v1's tool output.
    first_request = json.dumps(conversations_for(scripted_model, BIGGER)[0]["messages"])
    assert BRIEF in first_request
    assert V1_SUMMARY in first_request
    assert BIGGER in first_request
    assert "V1-TOOL-OUTPUT-MARKER" not in first_request
    assert b'font-size="80"' in poster_of(v2.pk)
    assert b'font-size="40"' in poster_of(v1.pk)
    assert Creation.objects.get(pk=v1.creation_id).shown_run_id == v2.pk

    # A refine of v1 after v2 branches from v1: it sees v1's poster, not v2's.
    v3 = wait_for_final(run_refine(run=v1, user=team.member, instruction="make the title green"), logs=run_stack.logs)
    assert (v3.version, v3.parent_id) == (3, v1.pk)
    assert v3.status == RunStatus.SUCCEEDED, v3.reason
    assert hashlib.sha256(poster_of(v3.pk)).digest() == hashlib.sha256(poster_of(v1.pk)).digest()

    # Snapshots count in the workspace's storage (beside every other file it keeps) and go with their creation.
    snapshots = list(RunSnapshot.objects.filter(run__creation_id=v1.creation_id))
    assert len(snapshots) == 3
    assert all(s.size > 0 for s in snapshots)
    artifacts = sum(a.size + a.derived_bytes for a in Artifact.objects.filter(workspace=team.workspace))
    inputs = sum(InputFile.objects.filter(creation__workspace=team.workspace).values_list("size", flat=True))
    event_files = sum(Run.objects.filter(creation__workspace=team.workspace).values_list("event_file_bytes", flat=True))
    assert workspace_storage_bytes(workspace=team.workspace) == (
        artifacts + inputs + event_files + sum(s.size for s in snapshots)
    )
    stored = [str(s.file.name) for s in snapshots]
    storage = snapshots[0].file.storage
    assert all(storage.exists(name) for name in stored)
    creation_delete(creation=Creation.objects.get(pk=v1.creation_id), user=team.member)
    assert not any(storage.exists(name) for name in stored)
    assert workspace_storage_bytes(workspace=team.workspace) == 0


def test_a_message_to_a_running_agent_is_in_its_very_next_model_request(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    gate = threading.Event()
    endpoint = scripted_endpoint(
        team, scripted_model, [held_until(gate, bash("echo working")), submit_reply("Done, signed.")]
    )
    run = submit(team, endpoint, brief="a note that takes a while")
    wait_until(
        lambda: len(conversations_for(scripted_model, "takes a while")) == 1,
        timeout=60,
        what="the run's first model request",
        logs=run_stack.logs,
    )
    said = "Please sign it with our team name."
    run_message_send(run=run, user=team.member, text=said)  # while the first request is at the model
    gate.set()
    run = wait_for_final(run, logs=run_stack.logs)
    assert run.status == RunStatus.SUCCEEDED, run.reason

    first, second = (json.dumps(body["messages"]) for body in conversations_for(scripted_model, "takes a while"))
    assert said not in first
    assert said in second
    assert team.member.username in second
    events = list(RunEvent.objects.filter(run=run, kind="person_message"))
    assert [(e.payload["author"], e.payload["text"], e.payload["step"]) for e in events] == [
        (team.member.username, said, 2)
    ]
    export = httpx.get(
        f"http://localhost:{run_stack.port}{reverse('run_trajectory_json', args=[run.pk])}",
        headers={"Cookie": run_stack.cookie_for(team.viewer)},
        timeout=30,
    )
    person_messages = [e for e in export.json()["events"] if e["kind"] == "person_message"]
    assert [e["payload"]["text"] for e in person_messages] == [said]


def test_a_version_over_the_snapshot_bound_keeps_its_output_and_says_what_was_left_out(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [])
    scripted_model.exhausted = per_task(
        {
            "again": [bash("ls /testbed /testbed/output /testbed/input"), submit_reply("Looked.")],
            "a huge scratch file": [
                bash(
                    "truncate -s 3G /testbed/scratch.bin && mkdir -p /testbed/output && "
                    "echo kept > /testbed/output/result.txt && du -sb --apparent-size /testbed"
                ),
                submit_reply("A result, and 3 GB of scratch."),
            ],
        }
    )
    v1 = wait_for_final(
        submit(team, endpoint, brief="a huge scratch file", files={"notes.txt": b"my notes"}), logs=run_stack.logs
    )
    assert v1.status == RunStatus.SUCCEEDED, v1.reason
    snapshot = RunSnapshot.objects.get(run=v1)
    assert snapshot.size < 1024 * 1024
    assert "Only output/ was kept" in snapshot.left_out
    assert "3.0 GB" in snapshot.left_out
    note = RunEvent.objects.get(run=v1, kind="snapshot").payload["note"]
    assert "Only output/ was kept" in note

    v2 = wait_for_final(run_refine(run=v1, user=team.member, instruction="again"), logs=run_stack.logs)
    assert v2.status == RunStatus.SUCCEEDED, v2.reason
    listing = tool_outputs(v2.pk)[0]
    assert "result.txt" in listing
    assert "notes.txt" in listing
    assert "scratch.bin" not in listing
    request = json.dumps(conversations_for(scripted_model, "again")[0]["messages"])
    assert "Only output/ was kept" in request


def test_a_newcomer_refines_the_demo_poster_with_its_recorded_follow_up(
    run_stack: AtelierServer, sandbox_image: str, team: Team
) -> None:
    """No key: the demo model makes the showcase poster, then replays its recorded follow-up on
    those very files (restored from the snapshot), and the title really grows."""
    showcase = next(entry for entry in SHOWCASE_BRIEFS if entry["kind"] == "poster")
    uploads = [SimpleUploadedFile(name, data) for name, data in showcase.get("inputs", {}).items()]
    v1 = creation_submit(workspace=team.workspace, author=team.member, brief=showcase["brief"], files=uploads)
    v1 = wait_for_final(v1, logs=run_stack.logs, timeout=180)
    assert v1.status == RunStatus.SUCCEEDED, v1.reason
    (follow_up,) = demo_follow_ups(showcase["brief"])
    v2 = wait_for_final(run_refine(run=v1, user=team.member, instruction=follow_up), logs=run_stack.logs, timeout=180)
    assert v2.status == RunStatus.SUCCEEDED, v2.reason

    def title_size(run_id: int) -> float:
        svg = poster_of(run_id).decode()
        return max(float(size) for size in re.findall(r'font-size="([\d.]+)"[^>]*>(?:Northwind|DevConf)', svg))

    assert title_size(v2.pk) > title_size(v1.pk)
    assert "ls" in RunEvent.objects.filter(run=v2, kind="tool_call").order_by("seq")[0].payload["arguments"]["command"]
