"""Shared steps of the end-to-end run tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from creations.models import FINAL_STATUSES, Run, RunEvent, Visibility
from creations.runs.services import creation_submit
from devstack.scripted_model import ScriptedModel, ScriptEntry
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint


def per_conversation(steps: Sequence[ScriptEntry]) -> Callable[[dict[str, Any]], ScriptEntry]:
    """Answer each conversation by its own progress, so many runs can share one server."""

    def answer(body: dict[str, Any]) -> ScriptEntry:
        done = sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")
        return steps[min(done, len(steps) - 1)]

    return answer


def per_brief(
    scripts: Mapping[str, Sequence[ScriptEntry]], *, default: Sequence[ScriptEntry]
) -> Callable[[dict[str, Any]], ScriptEntry]:
    """Answer each conversation with the script of the first key its brief contains
    (else `default`), each by its own progress: runs with different briefs share one server."""
    scripted = {key: per_conversation(steps) for key, steps in scripts.items()}
    otherwise = per_conversation(default)

    def answer(body: dict[str, Any]) -> ScriptEntry:
        conversation = json.dumps(body.get("messages", [])[:2])
        return next((script for key, script in scripted.items() if key in conversation), otherwise)(body)

    return answer


def per_task(scripts: Mapping[str, Sequence[ScriptEntry]]) -> Callable[[dict[str, Any]], ScriptEntry]:
    """Answer each conversation with the script of the first key its task contains (the brief, or a
    refine's instruction: the last user message before the agent first acted, so a refine's carried
    conversation and a person's later message do not count), each by its own progress (its turns
    with tool calls). Versions of one creation share one server this way."""

    def answer(body: dict[str, Any]) -> ScriptEntry:
        messages = body.get("messages", [])
        acted = [m for m in messages if m.get("role") == "assistant" and m.get("tool_calls")]
        first_action = next((i for i, m in enumerate(messages) if m in acted), len(messages))
        task = next(m["content"] for m in reversed(messages[:first_action]) if m.get("role") == "user")
        steps = next(steps for key, steps in scripts.items() if key in task)
        return steps[min(len(acted), len(steps) - 1)]

    return answer


def held_until(gate: threading.Event, entry: ScriptEntry, *, at_most: float = 90) -> Callable[[dict[str, Any]], Any]:
    """`entry`, answered only once the test sets `gate`: the run sits in flight meanwhile.
    After `at_most` seconds it answers anyway, so a failing test never leaves a run hanging."""

    def answer(body: dict[str, Any]) -> ScriptEntry:
        gate.wait(at_most)
        return entry

    return answer


def scripted_endpoint(team: Team, model: ScriptedModel, steps: Sequence[ScriptEntry]) -> ModelEndpoint:
    model.play([])
    model.exhausted = per_conversation(steps)
    return ModelEndpoint.objects.get_or_create(
        workspace=team.workspace, name="scripted", defaults={"base_url": model.base_url, "model": model.model}
    )[0]


def submit(
    team: Team,
    endpoint: ModelEndpoint,
    *,
    brief: str = "make a few files",
    files: dict[str, bytes] | None = None,
    visibility: str = Visibility.WORKSPACE,
    **limits: Any,
) -> Run:
    uploads = [SimpleUploadedFile(name, data) for name, data in (files or {}).items()]
    return creation_submit(
        workspace=team.workspace,
        author=team.member,
        brief=brief,
        files=uploads,
        visibility=visibility,
        model_endpoint=endpoint,
        **limits,
    )


def wait_until(check: Callable[[], bool], *, timeout: float, what: str, logs: Callable[[], str] = str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}\n{logs()}")


def wait_for_final(run: Run, *, timeout: float = 120, logs: Callable[[], str] = str) -> Run:
    wait_until(
        lambda: Run.objects.filter(pk=run.pk, status__in=FINAL_STATUSES).exists(),
        timeout=timeout,
        what=f"run {run.pk} to end",
        logs=logs,
    )
    run.refresh_from_db()
    return run


def wait_for_event(run: Run, kind: str, *, timeout: float = 60, logs: Callable[[], str] = str, **payload: Any) -> None:
    def seen() -> bool:
        events = RunEvent.objects.filter(run=run, kind=kind)
        return any(all(e.payload.get(k) == v for k, v in payload.items()) for e in events)

    wait_until(seen, timeout=timeout, what=f"a {kind} event in run {run.pk}", logs=logs)


def stored_events(run: Run) -> list[dict[str, Any]]:
    return [
        {"seq": e.seq, "kind": e.kind, "payload": e.payload} for e in RunEvent.objects.filter(run=run).order_by("seq")
    ]
