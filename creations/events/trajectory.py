"""Reading a run's stored events back: folded into steps for its pages, or whole for the export.

Payloads are read through their schemas (creations/events/schema.py), so the
pages and the export use the same field names the agent and the recorder
write; an event that does not fit is left out (and logged), never a 500.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from creations.events.redaction import payload_shown
from creations.events.schema import (
    ArtifactsCollected,
    RejectedOutput,
    SnapshotKept,
    StoredToolCall,
    StoredToolResult,
    read_event,
)
from creations.models import Run, RunEvent
from sandboxes.agent.events import AssistantMessage, ErrorReport, Finished, PersonMessage, TextDelta, ToolOutputDelta


@dataclass
class TrajectoryCall:
    call_id: str
    name: str
    arguments: dict[str, Any] | str  # text: the start of the arguments' JSON, when they were too long to store
    output: str = ""
    result_seq: int | None = None  # the tool_result event, whose whole output a page can link to
    stored_output_bytes: int | None = None  # the whole output's size, when only its start is stored inline
    is_error: bool = False
    exit_code: int | None = None
    duration: float | None = None
    finished: bool = False

    @property
    def command(self) -> str:
        """What a person reads as 'the command': bash's command, or the editor's action
        (or, for arguments cut to fit, the start of their JSON, as the live page shows it)."""
        if isinstance(self.arguments, str):
            return self.arguments[:2000]
        args = self.arguments
        if self.name == "execute_bash":
            return str(args.get("command", ""))
        if self.name == "str_replace_editor":
            return f"{args.get('command', '')} {args.get('path', '')}".strip()
        if self.name == "submit":
            return ""
        return json.dumps(args, ensure_ascii=False)[:2000]

    @property
    def output_preview(self) -> str:
        return self.output[: settings.RUN_PAGE_OUTPUT_PREVIEW_CHARS]

    @property
    def output_is_cut(self) -> bool:
        return len(self.output) > settings.RUN_PAGE_OUTPUT_PREVIEW_CHARS


@dataclass
class Step:
    number: int
    text: str = ""
    reasoning: str = ""
    calls: list[TrajectoryCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    person_messages: list[PersonMessage] = field(default_factory=list)  # what people told the agent before it
    has_message: bool = False  # the final message replaces the streamed pieces


@dataclass(frozen=True)
class NotKept:
    """A run's output files that were not kept: the first ones named, each with why, and how many in all."""

    items: list[RejectedOutput] = field(default_factory=list)
    total: int = 0
    at_least: bool = False  # the output was too big to count to its end: `total` or more

    @property
    def unnamed(self) -> int:
        return self.total - len(self.items)

    @classmethod
    def of(cls, event: ArtifactsCollected) -> NotKept:
        items = event.rejected if isinstance(event.rejected, list) else []  # text: only its start was stored
        return cls(
            items=items,
            total=max(event.rejected_count or 0, len(items)),
            at_least=bool(event.rejected_count_partial),
        )


@dataclass
class Trajectory:
    steps: list[Step]
    finished: dict[str, Any] | None
    notes: list[str]
    earlier_before: int | None = None  # the seq of the first step shown, when earlier steps exist
    # Output files not kept, and why; from the artifacts event, so only in the window that ends the run.
    rejected: NotKept = field(default_factory=NotKept)


class _Folder:
    """Folds events, in seq order, into steps (the same shape the live page builds)."""

    def __init__(self) -> None:
        self.steps: dict[int, Step] = {}
        self.calls: dict[str, TrajectoryCall] = {}
        self.finished: dict[str, Any] | None = None
        self.notes: list[str] = []
        self.rejected = NotKept()

    def step(self, number: int) -> Step:
        return self.steps.setdefault(number, Step(number=number))

    def add(self, seq: int, kind: str, payload: Any) -> None:
        event = read_event(kind, payload)
        if event is None:
            return
        number = getattr(event, "step", None)
        if isinstance(number, int):
            self.step(number)
        if isinstance(event, TextDelta) and kind == "assistant_delta":
            step = self.step(event.step)
            if not step.has_message:
                step.text += event.text
        elif isinstance(event, TextDelta):
            self.step(event.step).reasoning += event.text
        elif isinstance(event, AssistantMessage):
            step = self.step(event.step)
            step.text = event.content or step.text or ""
            step.reasoning = event.reasoning or step.reasoning or ""
            step.has_message = True
        elif isinstance(event, StoredToolCall):
            call = TrajectoryCall(call_id=event.call_id, name=event.name, arguments=event.arguments)
            self.calls[call.call_id] = call
            self.step(event.step).calls.append(call)
        elif isinstance(event, ToolOutputDelta):
            delta_of = self.calls.get(event.call_id)
            if delta_of is not None and not delta_of.finished:
                delta_of.output += event.text
        elif isinstance(event, StoredToolResult):
            result_of = self.calls.get(event.call_id)
            if result_of is not None:
                result_of.output = event.output
                result_of.is_error = event.is_error
                result_of.exit_code = event.exit_code
                result_of.duration = event.duration
                result_of.finished = True
                result_of.result_seq = seq
                whole = (event.overflow or {}).get("output")
                result_of.stored_output_bytes = whole.bytes if whole is not None else None
        elif isinstance(event, PersonMessage):
            self.step(event.step).person_messages.append(event)
        elif isinstance(event, SnapshotKept):
            if event.note:
                self.notes.append(event.note)
        elif isinstance(event, ErrorReport):
            (self.step(event.step).errors if event.step is not None else self.notes).append(event.message)
        elif isinstance(event, Finished):
            self.finished = event.model_dump(exclude_defaults=True)
        elif isinstance(event, ArtifactsCollected):
            if event.note:
                self.notes.append(event.note)
            self.rejected = NotKept.of(event)

    def trajectory(self, *, earlier_before: int | None) -> Trajectory:
        steps = [self.steps[k] for k in sorted(self.steps)]
        return Trajectory(
            steps=steps,
            finished=self.finished,
            notes=self.notes,
            earlier_before=earlier_before,
            rejected=self.rejected,
        )


def run_trajectory(*, run: Run, hidden: Sequence[str], before_seq: int | None = None) -> Trajectory:
    """A window of the run's steps, folded from its stored events: the latest
    RUN_PAGE_STEPS steps with the run-wide events (how it finished, notes), or
    the RUN_PAGE_STEPS steps stored before event `before_seq` (loaded on demand);
    told to a reader from whom the names `hidden` are hidden (creations.events.redaction).

    A step's events lie between its `step_started` and the next one's, so a
    window is a range of seqs: two index range reads, whatever the run's length."""
    size = settings.RUN_PAGE_STEPS
    starts = RunEvent.objects.filter(run=run, kind="step_started")
    if before_seq is not None:
        starts = starts.filter(seq__lt=before_seq)
    latest_starts = list(starts.order_by("-seq").values_list("seq", flat=True)[: size + 1])
    more_before = len(latest_starts) > size
    first_seq = latest_starts[size - 1] if more_before else 1
    events = RunEvent.objects.filter(run=run, seq__gte=first_seq)
    if before_seq is not None:
        events = events.filter(seq__lt=before_seq)
    folder = _Folder()
    for seq, kind, payload in events.order_by("seq").values_list("seq", "kind", "payload"):
        folder.add(seq, kind, payload_shown(kind, payload, hidden))
    return folder.trajectory(earlier_before=first_seq if more_before else None)


def live_replay_after(*, run: Run) -> int:
    """Where a live page's stream starts: before the latest RUN_PAGE_STEPS steps (0: from the first
    event). Earlier steps load on demand, so opening a long run does not replay all of it."""
    size = settings.RUN_PAGE_STEPS
    starts = RunEvent.objects.filter(run=run, kind="step_started").order_by("-seq")
    latest_starts = list(starts.values_list("seq", flat=True)[: size + 1])
    return latest_starts[size - 1] - 1 if len(latest_starts) > size else 0


def rejected_outputs(*, run: Run) -> NotKept:
    """The run's output files that were not kept, each with why (too many, too large, a link, past the
    workspace's storage quota...), from its `artifacts` event: one read at the end of its events."""
    payload = (
        RunEvent.objects.filter(run=run, kind="artifacts").order_by("-seq").values_list("payload", flat=True).first()
    )
    event = read_event("artifacts", payload) if payload is not None else None
    return NotKept.of(event) if isinstance(event, ArtifactsCollected) else NotKept()


EXPORT_PAGE_EVENTS = 500


def run_export_summary(*, run: Run) -> dict[str, Any]:
    """Everything the trajectory export holds but its events (see run_export_event_pages)."""
    creation = run.creation
    return {
        "creation": {"id": creation.pk, "title": str(creation), "brief": creation.brief},
        "run": {
            "id": run.pk,
            "status": run.status,
            "reason": run.reason,
            "created_at": run.created_at.isoformat(),
            "started_at": run.started_at.isoformat() if run.started_at else None,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "steps": run.steps,
            "prompt_tokens": run.prompt_tokens,
            "completion_tokens": run.completion_tokens,
            "sandbox_seconds": run.sandbox_seconds,
        },
        "artifacts": [
            {"path": a.path, "kind": a.kind, "size": a.size, "content_type": a.content_type}
            for a in run.artifacts.all()
        ],
    }


def run_export_event_page(*, run_id: int, after_seq: int, hidden: Sequence[str]) -> list[dict[str, Any]]:
    """The next page of exported events after `after_seq` (empty at the end); payloads as their schemas read them,
    told to a reader from whom the names `hidden` are hidden. A page at a time, so an export of a long run never
    holds all its events."""
    page = []
    for event in RunEvent.objects.filter(run_id=run_id, seq__gt=after_seq).order_by("seq")[:EXPORT_PAGE_EVENTS]:
        typed = read_event(event.kind, event.payload)
        payload = typed.model_dump(mode="json", exclude_unset=True) if typed is not None else event.payload
        shown = payload_shown(event.kind, payload, hidden)
        page.append({"seq": event.seq, "kind": event.kind, "payload": shown, "at": event.created_at.isoformat()})
    return page
