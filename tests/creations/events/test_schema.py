"""The run event contract (creations/events/schema.py): one schema per kind,
held by what stores events, what reads them, and the run page's script."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from creations.events.schema import EVENT_KINDS, EVENT_SCHEMAS, EventSchemaError, check_event, validate_event
from creations.events.store import store_events
from creations.models import RunEvent, RunStatus
from sandboxes.agent.events import EVENT_KINDS as AGENT_EVENT_KINDS
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from tests.support.fixtures.runs import AtelierServer
from tests.support.runs import scripted_endpoint, stored_events, submit, wait_for_final
from tests.support.scripted_model import ScriptedModel, bash, call, reply
from tests.support.scripted_model import submit as submit_reply

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


def test_capped_payloads_fit_every_schema() -> None:
    capped = {"truncated": True, "overflow": {"output": {"path": "run-events/1/x.txt", "bytes": 99999}}}
    for kind, payload in VALID.items():
        validate_event(kind, {**payload, **capped})
    validate_event("tool_result", {**VALID["tool_result"], "stream_omitted_bytes": 12})


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


def _handled_kinds(script: str) -> set[str]:
    return set(re.findall(r'case "([a-z_]+)":', script))


def _payload_fields_read(script: str) -> set[str]:
    return set(re.findall(r"\bp\.([a-z_]+)", script)) | set(re.findall(r"\bp\.usage\.([a-z_]+)", script))


def _declared_fields() -> set[str]:
    fields: set[str] = set()
    for schema in EVENT_SCHEMAS.values():
        for name, info in schema.model_fields.items():
            fields.add(name)
            nested = getattr(info.annotation, "model_fields", None)
            fields.update(nested or ())
    from creations.events.schema import UsageSummary

    return fields | set(UsageSummary.model_fields)


def test_the_run_page_script_renders_every_kind_and_reads_only_declared_fields() -> None:
    script = (ROOT / "static" / "js" / "run_page.js").read_text()
    assert _handled_kinds(script) == set(EVENT_KINDS)
    assert _payload_fields_read(script) <= _declared_fields()


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
    run = wait_for_final(submit(team, endpoint, brief="print a lot"), logs=run_stack.logs)
    assert run.status == RunStatus.SUCCEEDED, run.reason

    stored = stored_events(run)
    for event in stored:
        validate_event(event["kind"], event["payload"])
    kinds = {e["kind"] for e in stored}
    assert set(EVENT_KINDS) - {"error"} <= kinds
    assert any(e["payload"].get("truncated") for e in stored if e["kind"] == "assistant_message")
    assert any(e["payload"].get("is_error") for e in stored if e["kind"] == "tool_result")
