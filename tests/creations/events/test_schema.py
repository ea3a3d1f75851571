"""The run event contract (creations/events/schema.py): one schema per kind,
held by what stores events, what reads them, and the run page's script."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from pydantic import BaseModel

from creations.events.payload_cap import cap_payload
from creations.events.schema import (
    EVENT_KINDS,
    EVENT_SCHEMAS,
    EventSchemaError,
    OverflowFile,
    check_event,
    validate_event,
)
from creations.events.store import event_wire, store_events
from creations.events.trajectory import run_export_event_page, run_trajectory
from creations.models import RunEvent, RunStatus
from creations.runs.messages import run_message_send
from creations.runs.state import run_finish
from devstack.scripted_model import ScriptedModel, bash, call, http_error, reply
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from sandboxes.agent.events import EVENT_KINDS as AGENT_EVENT_KINDS
from tests.support.events import verify_events
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, stored_events, submit, wait_for_final

ROOT = Path(__file__).resolve().parents[3]

VALID: dict[str, dict[str, Any]] = {
    "step_started": {"step": 1, "remaining": 39},
    "assistant_delta": {"step": 1, "text": "Let me"},
    "reasoning_delta": {"step": 1, "text": "hm"},
    "assistant_message": {"step": 1, "content": "Let me look.", "reasoning": None},
    "tool_call": {"step": 1, "call_id": "c1", "name": "execute_bash", "arguments": {"command": "ls"}},
    "tool_output_delta": {"step": 1, "call_id": "c1", "text": "a\n"},
    "tool_result": {"step": 1, "call_id": "c1", "name": "execute_bash", "output": "", "is_error": False, "duration": 1},
    "usage": {"step": 1, "prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12, "estimated": False},
    "error": {"step": 1, "message": "The model failed."},
    "finished": {"reason": "submitted", "steps": 1, "message": "Done."},
    "person_message": {"step": 2, "author": "bob", "text": "Sign it, please."},
    "snapshot": {"size": 2048, "note": None},
    "status": {"status": "running", "reason": "", "final": False},
    "artifacts": {"items": [{"id": 1, "path": "a.png", "kind": "image", "size": 3, "content_type": "image/png"}]},
}


def test_every_kind_the_agent_emits_has_a_schema_and_every_schema_an_example() -> None:
    assert set(AGENT_EVENT_KINDS) <= set(EVENT_KINDS)
    assert set(VALID) == set(EVENT_KINDS)


@pytest.mark.parametrize("kind", sorted(VALID))
def test_each_schema_takes_its_payload_and_refuses_an_undeclared_field(kind: str) -> None:
    validate_event(kind, VALID[kind])
    with pytest.raises(EventSchemaError, match="does not match"):
        validate_event(kind, {**VALID[kind], "surprise": 1})


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [
        ("tool_result", "is_error", "maybe"),
        ("usage", "prompt_tokens", "many"),
        ("status", "status", "exploded"),
        ("artifacts", "items", [{"id": 1, "path": "a", "kind": "hologram", "size": 1, "content_type": "x"}]),
    ],
)
def test_a_field_of_the_wrong_type_or_value_is_refused(kind: str, field: str, value: Any) -> None:
    with pytest.raises(EventSchemaError):
        validate_event(kind, {**VALID[kind], field: value})


# For each kind, a field given a value of the wrong type: no coercion, "3" is not a step and 1 is not True.
WRONG: dict[str, tuple[str, Any]] = {
    "step_started": ("step", "1"),
    "assistant_delta": ("text", 7),
    "reasoning_delta": ("step", 1.5),
    "assistant_message": ("content", ["Let me look."]),
    "tool_call": ("arguments", ["ls"]),
    "tool_output_delta": ("call_id", 1),
    "tool_result": ("is_error", 0),
    "usage": ("estimated", "false"),
    "error": ("message", None),
    "finished": ("reason", "gave_up"),
    "person_message": ("author", None),
    "snapshot": ("size", "2 KB"),
    "status": ("final", "yes"),
    "artifacts": ("items", {"id": 1}),
}


@pytest.mark.parametrize("kind", sorted(WRONG))
def test_each_schema_refuses_a_value_of_the_wrong_type(kind: str) -> None:
    assert set(WRONG) == set(EVENT_KINDS)
    field, value = WRONG[kind]
    with pytest.raises(EventSchemaError, match=field):
        validate_event(kind, {**VALID[kind], field: value})


# A payload of each kind with one field too long to store inline (kinds of numbers only never are).
HUGE = "x" * 40_000
TOO_LONG: dict[str, dict[str, Any]] = {
    "assistant_delta": {**VALID["assistant_delta"], "text": HUGE},
    "reasoning_delta": {**VALID["reasoning_delta"], "text": HUGE},
    "assistant_message": {**VALID["assistant_message"], "content": HUGE},
    "tool_call": {**VALID["tool_call"], "arguments": {"command": "create", "path": "/a.txt", "file_text": HUGE}},
    "tool_output_delta": {**VALID["tool_output_delta"], "text": HUGE},
    "tool_result": {**VALID["tool_result"], "output": HUGE, "stream_omitted_bytes": 12},
    "error": {**VALID["error"], "message": HUGE},
    "finished": {**VALID["finished"], "message": HUGE},
    "person_message": {**VALID["person_message"], "text": HUGE},
    "snapshot": {**VALID["snapshot"], "note": HUGE},
    "status": {**VALID["status"], "reason": HUGE},
    "artifacts": {"items": [{**VALID["artifacts"]["items"][0], "id": i} for i in range(600)], "note": "Many."},
}


@pytest.mark.parametrize("kind", sorted(TOO_LONG))
def test_a_payload_cut_to_fit_still_matches_its_schema(kind: str) -> None:
    assert set(TOO_LONG) == set(EVENT_KINDS) - {"step_started", "usage"}
    capped = cap_payload(1, TOO_LONG[kind], limit=4096)
    assert capped["truncated"] is True
    validate_event(kind, capped)


def test_capped_payloads_fit_every_schema() -> None:
    # Every kind: test_a_payload_cut_to_fit_still_matches_its_schema, with what the store really writes.
    capped = {"truncated": True, "overflow": {"output": {"path": "run-events/1/x.txt", "bytes": 99999}}}
    validate_event("tool_result", {**VALID["tool_result"], **capped})
    validate_event("tool_result", {**VALID["tool_result"], "stream_omitted_bytes": 12})


FILE = {"path": "run-events/1/x.txt", "bytes": 99999}


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        # A field that is not text is text only when it was cut, and then `overflow` says so.
        ("tool_call", {**VALID["tool_call"], "arguments": '{"command": "l'}),
        ("artifacts", {"items": '[{"id": 1'}),
        # `overflow` points at fields of this kind, and comes with `truncated`.
        ("step_started", {**VALID["step_started"], "truncated": True, "overflow": {"output": FILE}}),
        ("tool_result", {**VALID["tool_result"], "truncated": True}),
        ("tool_result", {**VALID["tool_result"], "overflow": {"output": FILE}}),
        ("tool_result", {**VALID["tool_result"], "truncated": True, "overflow": {"output": {"path": "p"}}}),
    ],
)
def test_a_cut_that_is_not_accounted_for_is_refused(kind: str, payload: dict[str, Any]) -> None:
    with pytest.raises(EventSchemaError):
        validate_event(kind, payload)


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(EventSchemaError, match="unknown"):
        validate_event("teleport", {})


@pytest.mark.django_db
def test_a_drifting_event_is_refused_in_strict_mode_and_stored_otherwise(team: Team, settings: Any) -> None:
    run = make_run(team)
    settings.RUN_EVENT_SCHEMA_STRICT = True  # as in development and in the test stack's worker
    with pytest.raises(EventSchemaError):
        store_events(run.pk, [("usage", {"step": 1, "tokens": 5})])
    assert not RunEvent.objects.filter(run=run).exists()

    settings.RUN_EVENT_SCHEMA_STRICT = False
    check_event("usage", {"step": 1, "tokens": 5})  # logged, not raised
    store_events(run.pk, [("usage", {"step": 1, "tokens": 5})])
    assert RunEvent.objects.filter(run=run, kind="usage").count() == 1


@pytest.mark.django_db
def test_the_pages_and_the_export_read_a_cut_call_and_its_cut_output(team: Team, settings: Any, client: Client) -> None:
    settings.RUN_EVENT_PAYLOAD_MAX_BYTES = 4096
    settings.RUN_PAGE_OUTPUT_PREVIEW_CHARS = 100
    run = make_run(team, status=RunStatus.RUNNING)
    store_events(run.pk, [("step_started", VALID["step_started"]), ("tool_call", TOO_LONG["tool_call"])])
    store_events(run.pk, [("tool_result", {**TOO_LONG["tool_result"], "name": "str_replace_editor"})])

    (step,) = run_trajectory(run=run, hidden=()).steps
    (shown,) = step.calls
    assert shown.command.startswith('{"command": "create", "path": "/a.txt", "file_text": "xxx')
    assert shown.finished
    assert shown.output.startswith("xxx")
    assert shown.stored_output_bytes == len(HUGE)
    exported = run_export_event_page(run_id=run.pk, after_seq=0, hidden=())
    assert [e["payload"] for e in exported] == list(RunEvent.objects.filter(run=run).values_list("payload", flat=True))
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="Done.")
    client.force_login(team.member)
    page = client.get(reverse("run_detail", args=[run.pk])).content.decode()
    assert "Show the whole output (39.1\xa0KB)" in page  # the whole, not the part stored inline


# --- the run page's script renders what the schema says ------------------------------------


def _braced(text: str, start: int) -> str:
    """The text inside the braces opening at or after `start`."""
    opening = text.index("{", start)
    depth = 0
    for index in range(opening, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[opening + 1 : index]
    raise AssertionError("unbalanced braces")


def _payload_reads_by_kind(script: str) -> dict[str, set[tuple[str, ...]]]:
    """For each `case "kind":` of the page's switch, the payload paths it reads (`p.a.b`),
    including in the helpers it hands the payload to (`addCall(p)`)."""
    helpers = {m.group(1): _braced(script, m.end()) for m in re.finditer(r"function (\w+)\(p\b[^)]*\)", script)}
    cases = re.split(r'case "([a-z_]+)":', _braced(script, script.index("switch (event.kind)")))[1:]
    reads = {}
    for kind, body in zip(cases[::2], cases[1::2], strict=True):
        code = body + "".join(helpers[name] for name in re.findall(r"\b(\w+)\(p\b", body) if name in helpers)
        reads[kind] = {tuple(path.split(".")[1:]) for path in re.findall(r"\bp(?:\.[A-Za-z_]+)+", code)}
    return reads


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for m in map(_model_in, get_args(annotation)) if m is not None), None)


def _declared(schema: type[BaseModel], path: tuple[str, ...]) -> bool:
    """Whether `path` names fields of `schema` (a cut field's file under `overflow.<field>`)."""
    model: type[BaseModel] | None = schema
    rest = list(path)
    while rest and model is not None:
        name = rest.pop(0)
        if name not in model.model_fields:
            return False
        if name == "overflow":
            if rest and rest.pop(0) not in schema.model_fields:
                return False
            model = OverflowFile
        else:
            model = _model_in(model.model_fields[name].annotation)
    return True  # what is left reads a value's own properties (a string's length)


def test_the_run_page_script_renders_every_kind_and_reads_only_declared_fields() -> None:
    script = (ROOT / "static" / "js" / "run_page.js").read_text()
    reads = _payload_reads_by_kind(script)
    assert set(reads) == set(EVENT_KINDS)
    undeclared = {kind: sorted(p for p in reads[kind] if not _declared(EVENT_SCHEMAS[kind], p)) for kind in reads}
    assert not any(undeclared.values()), undeclared
    assert ("overflow", "output", "bytes") in reads["tool_result"]  # a cut output links to the whole of it
    envelope = set(event_wire(RunEvent(seq=1, kind="status", payload={}, created_at=timezone.now())))
    assert set(re.findall(r"\bevent\.([a-z_]+)", script)) <= envelope


def test_the_stream_script_reads_declared_fields_of_the_kinds_it_names() -> None:
    script = (ROOT / "static" / "js" / "run_stream.js").read_text()
    checks = re.findall(r'data\.kind === "([a-z_]+)"[^;]*?data\.payload\.([a-z_]+)', script)
    assert checks == [("status", "final")]
    assert all(_declared(EVENT_SCHEMAS[kind], (field,)) for kind, field in checks)


@pytest.mark.services
@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_every_event_a_real_run_stores_matches_its_schema(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    """A run with a command, a streamed output past the inline cap, an invalid
    call (an error observation) and a submit: every stored event validates."""
    long_answer = "A long answer. " * 3000  # past the 32 KB inline cap: stored cut, the rest in a file
    endpoint = scripted_endpoint(
        team,
        scripted_model,
        [
            bash("for i in $(seq 1 4000); do echo line $i of a long output; done", long_answer, reasoning="Hm."),
            reply("", [call("execute_bash", raw="{not json")]),
            submit_reply("Done."),
        ],
    )
    queued = submit(team, endpoint, brief="print a lot")
    run_message_send(run=queued, user=team.member, text="Count the lines too, please.")  # read at step 1
    run = wait_for_final(queued, logs=run_stack.logs)
    assert run.status == RunStatus.SUCCEEDED, run.reason

    verify_events(run, must_emit=set(EVENT_KINDS) - {"error"})
    stored = stored_events(run)
    for event in stored:
        validate_event(event["kind"], event["payload"])
    kinds = {e["kind"] for e in stored}
    assert set(EVENT_KINDS) - {"error"} <= kinds
    assert any(e["payload"].get("truncated") for e in stored if e["kind"] == "assistant_message")
    assert any(e["payload"].get("is_error") for e in stored if e["kind"] == "tool_result")


@pytest.mark.services
@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_run_that_fails_emits_every_kind_each_as_its_schema_says(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    """A long streamed output (what the model sees of it, 16,000 characters of
    Japanese, is cut to fit), a file written through the editor whose arguments
    are too long to keep inline, a call the model got wrong (an error observation),
    then the model fails: every kind is stored, each as its schema says."""
    big_file = "A line of a long file.\n" * 2000  # 46 KB of arguments: the call is stored cut
    out_file = "/testbed/output/big.txt"
    endpoint = scripted_endpoint(
        team,
        scripted_model,
        [
            bash("for i in $(seq 1 3000); do echo 東京の食べ物の地図、$i 行目; done", "Printing.", reasoning="Hm."),
            reply("", [call("str_replace_editor", {"command": "create", "path": out_file, "file_text": big_file})]),
            reply("", [call("execute_bash", raw="{not json")]),
            http_error(400, "The request was refused."),
        ],
    )
    queued = submit(team, endpoint, brief="print a lot")
    run_message_send(run=queued, user=team.member, text="Print it all, please.")  # read at step 1
    run = wait_for_final(queued, logs=run_stack.logs)
    assert run.status == RunStatus.FAILED, run.reason

    events = verify_events(run, must_emit=EVENT_KINDS)
    payloads = {kind: [e.payload for e in events if e.kind == kind] for kind in EVENT_KINDS}
    (cut_call,) = [p for p in payloads["tool_call"] if p["name"] == "str_replace_editor"]
    assert cut_call["truncated"] is True
    assert cut_call["overflow"]["arguments"]["bytes"] > len(big_file)
    (cut_result,) = [p for p in payloads["tool_result"] if p.get("truncated")]
    assert cut_result["overflow"]["output"]["bytes"] > 32 * 1024
    assert "東京の食べ物の地図、3000 行目" in "".join(p["text"] for p in payloads["tool_output_delta"])
    assert any(p["is_error"] for p in payloads["tool_result"])
    assert [p["reason"] for p in payloads["finished"]] == ["model_error"]
    # Said in the platform's words: the endpoint's own text never reaches a page.
    assert "rejected the request (HTTP 400)" in payloads["error"][0]["message"]
    assert "The request was refused." not in json.dumps(payloads)
    assert [item["path"] for item in payloads["artifacts"][0]["items"]] == ["big.txt"]
    (shown,) = [
        c for step in run_trajectory(run=run, hidden=()).steps for c in step.calls if c.name == "str_replace_editor"
    ]
    assert shown.finished
    assert not shown.is_error
