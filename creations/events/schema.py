"""The run event contract: one schema per event kind, as stored and streamed.

A run's events are the agent's (declared by the agent package, which knows
nothing of runs: `sandboxes.agent.events.AGENT_EVENT_PAYLOADS`) plus the
platform's own (`status`, `artifacts`). What is stored may carry more than the
agent sent: a payload too large to keep inline is cut and points to files
(`truncated`, `overflow`), and a command's result says how much of its live
output was left out (`stream_omitted_bytes`). Those fields are declared here,
once, for every kind.

Every schema refuses undeclared fields, so a payload that drifts from the
contract is a bug found where it is stored (`check_event`), not a page that
silently shows less. Readers (the trajectory, the export, the run page's
script) take field names from here; a test holds the script to them.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from django.conf import settings
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from creations.models import ArtifactKind, RunStatus
from sandboxes.agent.events import AGENT_EVENT_PAYLOADS, EventPayload, ToolResult

log = logging.getLogger(__name__)


class _Schema(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OverflowFile(_Schema):
    path: str  # in Django storage, under run-events/<run id>/
    bytes: int


class Capped(_Schema):
    """Present on any stored payload whose fields were cut to fit the inline limit."""

    truncated: bool = False
    overflow: dict[str, OverflowFile] | None = None


class StoredToolResult(ToolResult, Capped):
    stream_omitted_bytes: int | None = None  # live output left out past the per-call cap


class UsageSummary(_Schema):
    steps: int
    prompt_tokens: int
    completion_tokens: int
    sandbox_seconds: float
    output_bytes: int


class StatusChange(Capped):
    status: Literal[tuple(RunStatus.values)]  # type: ignore[valid-type]
    reason: str
    final: bool
    usage: UsageSummary | None = None  # on the final status only


class ArtifactItem(_Schema):
    id: int
    path: str
    kind: Literal[tuple(ArtifactKind.values)]  # type: ignore[valid-type]
    size: int
    content_type: str


class RejectedOutput(_Schema):
    name: str
    reason: str


class ArtifactsCollected(Capped):
    items: list[ArtifactItem]
    rejected: list[RejectedOutput] | None = None
    note: str | None = None


def _stored(payload: type[EventPayload]) -> type[BaseModel]:
    if payload is ToolResult:
        return StoredToolResult
    return create_model(f"Stored{payload.__name__}", __base__=(payload, Capped))


EVENT_SCHEMAS: dict[str, type[BaseModel]] = {
    **{kind: _stored(payload) for kind, payload in AGENT_EVENT_PAYLOADS.items()},
    "status": StatusChange,
    "artifacts": ArtifactsCollected,
}
EVENT_KINDS = tuple(EVENT_SCHEMAS)


class EventSchemaError(ValueError):
    """An event that does not match its schema (an unknown kind, a field undeclared or of the wrong type)."""


def validate_event(kind: str, payload: dict[str, Any]) -> BaseModel:
    schema = EVENT_SCHEMAS.get(kind)
    if schema is None:
        raise EventSchemaError(f"unknown run event kind {kind!r}")
    try:
        return schema.model_validate(payload)
    except ValidationError as error:
        raise EventSchemaError(f"run event {kind!r} does not match its schema: {error}") from error


def check_event(kind: str, payload: dict[str, Any]) -> None:
    """Where events are stored: a mismatch raises when RUN_EVENT_SCHEMA_STRICT (development,
    tests), and is logged otherwise, so production never loses a run's events to a schema bug."""
    try:
        validate_event(kind, payload)
    except EventSchemaError:
        if settings.RUN_EVENT_SCHEMA_STRICT:
            raise
        log.exception("Storing a run event that does not match its schema")


def read_event(kind: str, payload: Any) -> BaseModel | None:
    """A stored payload as its schema, for readers; None (logged) for one that does not fit,
    so an odd old row is left out of a page rather than breaking it."""
    try:
        return validate_event(kind, payload if isinstance(payload, dict) else {})
    except EventSchemaError:
        log.warning("Run event of kind %r left out: it does not match its schema", kind, exc_info=True)
        return None
