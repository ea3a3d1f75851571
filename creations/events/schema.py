"""The run event contract: one schema per event kind, as stored and streamed.

A run's events are the agent's (declared by the agent package, which knows
nothing of runs: `sandboxes.agent.events.AGENT_EVENT_PAYLOADS`) plus the
platform's own (`status`, `artifacts`). The agent owns its part because it is
the one that sends those fields, and the CLI prints them without any platform;
the platform owns the stored form, extending each agent schema here, because
only storing adds to a payload: one too large to keep inline has its largest
fields cut to their first characters, the whole of each kept in a file
(`truncated`, `overflow`), and a command's result says how much of its live
output was left out (`stream_omitted_bytes`).

Every schema refuses undeclared fields and values of the wrong type, so a
payload that drifts from the contract is a bug found where it is stored
(`check_event`), not a page that silently shows less. Readers (the
trajectory, the export, the run page's script) take field names from here;
a test holds the script to them.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, ClassVar, Literal, Self

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from creations.models import ArtifactKind, RunStatus
from sandboxes.agent.events import AGENT_EVENT_PAYLOADS, EventPayload, ToolCall, ToolResult
from sandboxes.agent.usage import RunUsage

log = logging.getLogger(__name__)


class _Schema(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class OverflowFile(_Schema):
    path: str  # in Django storage, under run-events/<run id>/
    bytes: int


class Capped(_Schema):
    """Present on any stored payload whose fields were cut to fit the inline limit:
    `overflow` maps each cut field to the file holding all of it."""

    truncated: bool = False
    overflow: dict[str, OverflowFile] | None = None

    # Fields that are not text yet may be cut like any other, to the first characters of
    # their JSON; they are text exactly when `overflow` names them.
    cut_to_text: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="after")
    def _cuts_are_accounted_for(self) -> Self:
        overflow = self.overflow or {}
        if self.truncated != bool(overflow):
            raise ValueError("`truncated` is set exactly when `overflow` names the fields that were cut")
        unknown = sorted(set(overflow) - set(type(self).model_fields) - {"truncated", "overflow"})
        if unknown:
            raise ValueError(f"`overflow` names fields this kind does not have: {unknown}")
        for name in self.cut_to_text:
            if isinstance(getattr(self, name), str) and name not in overflow:
                raise ValueError(f"`{name}` is text only when it was cut to fit (and named in `overflow`)")
        return self


class StoredToolCall(ToolCall, Capped):
    arguments: dict[str, Any] | str  # type: ignore[assignment]  # text: the start of its JSON, when cut

    cut_to_text = frozenset({"arguments"})


class StoredToolResult(ToolResult, Capped):
    stream_omitted_bytes: int | None = None  # live output left out past the per-call cap


class UsageSummary(_Schema):
    """A run's whole usage, on its final status."""

    steps: int
    prompt_tokens: int
    completion_tokens: int
    sandbox_seconds: float  # to the millisecond
    output_bytes: int

    @classmethod
    def of(cls, usage: RunUsage) -> UsageSummary:
        return cls(
            steps=usage.steps,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            sandbox_seconds=round(usage.sandbox_seconds, 3),
            output_bytes=usage.output_bytes,
        )

    def usage(self) -> RunUsage:
        return RunUsage(
            steps=self.steps,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            sandbox_seconds=self.sandbox_seconds,
            output_bytes=self.output_bytes,
        )


class StatusChange(Capped):
    # Not strict: a stored payload holds the status's value, not the member itself.
    status: Annotated[RunStatus, Field(strict=False)]
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
    items: list[ArtifactItem] | str  # text: the start of its JSON, when a run made very many files
    rejected: list[RejectedOutput] | str | None = None  # the first files not kept, each with why
    # How many were not kept in all, named or not (absent: as many as are named); with
    # `rejected_count_partial`, at least that many: the output was too big to count to its end.
    rejected_count: int | None = None
    rejected_count_partial: bool | None = None
    note: str | None = None

    cut_to_text = frozenset({"items", "rejected"})


class SnapshotKept(Capped):
    """The run's /testbed kept for the next version (size 0: not kept; the note says why)."""

    size: int
    note: str | None = None


_STORED_AS: dict[type[EventPayload], type[Capped]] = {ToolCall: StoredToolCall, ToolResult: StoredToolResult}


def _stored(payload: type[EventPayload]) -> type[BaseModel]:
    if payload in _STORED_AS:
        return _STORED_AS[payload]
    return create_model(f"Stored{payload.__name__}", __base__=(payload, Capped))


EVENT_SCHEMAS: dict[str, type[BaseModel]] = {
    **{kind: _stored(payload) for kind, payload in AGENT_EVENT_PAYLOADS.items()},
    "status": StatusChange,
    "artifacts": ArtifactsCollected,
    "snapshot": SnapshotKept,
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


def stored_form(payload: BaseModel) -> dict[str, Any]:
    """A payload as it is stored and streamed: JSON, with the fields it was given (a default not given stays out)."""
    return payload.model_dump(mode="json", exclude_unset=True)


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
