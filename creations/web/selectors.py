"""Reads for creations, runs and artifacts."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone

from creations.models import ACTIVE_STATUSES, Artifact, Creation, Run, RunEvent, Visibility
from workspaces.models import Workspace


def _month_start() -> datetime:
    return timezone.now().replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def workspace_usage(*, workspace: Workspace) -> dict[str, Any]:
    """This calendar month's usage: runs, model tokens, sandbox time; plus stored artifact bytes."""
    month = Run.objects.filter(creation__workspace=workspace, created_at__gte=_month_start()).aggregate(
        runs=Count("pk"),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        seconds=Sum("sandbox_seconds"),
    )
    stored = Artifact.objects.filter(run__creation__workspace=workspace).aggregate(bytes=Sum("size"))
    return {
        "runs": month["runs"] or 0,
        "tokens": (month["prompt"] or 0) + (month["completion"] or 0),
        "sandbox_minutes": round((month["seconds"] or 0) / 60, 1),
        "storage_bytes": stored["bytes"] or 0,
    }


def _visible_in_workspace(user: User | AnonymousUser) -> Q:
    """Workspace members see everything but other people's private creations."""
    return ~Q(visibility=Visibility.PRIVATE) | Q(author_id=user.pk)


def dashboard_context(*, workspace: Workspace, user: User | AnonymousUser | None = None) -> dict[str, Any]:
    runs = Run.objects.filter(creation__workspace=workspace).select_related("creation", "creation__author")
    if user is not None:
        runs = runs.filter(creation__in=Creation.objects.filter(_visible_in_workspace(user)))
    return {
        "running_runs": list(runs.filter(status__in=ACTIVE_STATUSES)[:20]),
        "recent_runs": list(runs[:10]),
        "usage": workspace_usage(workspace=workspace),
    }


def gallery_artifacts(
    *, user: User | AnonymousUser, workspace: Workspace | None = None, kind: str = ""
) -> QuerySet[Artifact]:
    """Artifacts for a gallery: a workspace's (as this member sees them) or the public ones."""
    artifacts = Artifact.objects.select_related("run__creation__workspace")
    if workspace is None:
        artifacts = artifacts.filter(run__creation__visibility=Visibility.PUBLIC)
    else:
        visible = Creation.objects.filter(workspace=workspace).filter(_visible_in_workspace(user))
        artifacts = artifacts.filter(run__creation__in=visible)
    if kind:
        artifacts = artifacts.filter(kind=kind)
    return artifacts.order_by("-created_at", "path")


# --- the trajectory of a run, folded into steps -------------------------------


@dataclass
class ToolCall:
    call_id: str
    name: str
    arguments: Any
    output: str = ""
    is_error: bool = False
    exit_code: int | None = None
    duration: float | None = None
    finished: bool = False

    @property
    def command(self) -> str:
        """What a person reads as 'the command': bash's command, or the editor's action."""
        args = self.arguments if isinstance(self.arguments, dict) else {}
        if self.name == "execute_bash":
            return str(args.get("command", ""))
        if self.name == "str_replace_editor":
            return f"{args.get('command', '')} {args.get('path', '')}".strip()
        if self.name == "submit":
            return ""
        return str(self.arguments)[:2000]


@dataclass
class Step:
    number: int
    text: str = ""
    reasoning: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    has_message: bool = False  # the final message replaces the streamed pieces


@dataclass
class Trajectory:
    steps: list[Step]
    finished: dict[str, Any] | None
    notes: list[str]


def run_trajectory(*, run: Run) -> Trajectory:
    """The run's stored events folded into steps (the same shape the live page builds)."""
    steps: dict[int, Step] = {}
    calls: dict[str, ToolCall] = {}
    finished: dict[str, Any] | None = None
    notes: list[str] = []
    for event in RunEvent.objects.filter(run=run).order_by("seq").only("kind", "payload"):
        payload = event.payload if isinstance(event.payload, dict) else {}
        number = _int(payload.get("step"))
        step = steps.setdefault(number, Step(number=number)) if "step" in payload else None
        kind = event.kind
        if step is not None and kind == "assistant_delta" and not step.has_message:
            step.text += str(payload.get("text", ""))
        elif step is not None and kind == "reasoning_delta":
            step.reasoning += str(payload.get("text", ""))
        elif step is not None and kind == "assistant_message":
            step.text = str(payload.get("content") or step.text or "")
            step.reasoning = str(payload.get("reasoning") or step.reasoning or "")
            step.has_message = True
        elif step is not None and kind == "tool_call":
            call = ToolCall(call_id=str(payload.get("call_id", "")), name=str(payload.get("name", "")),
                            arguments=payload.get("arguments"))  # fmt: skip
            calls[call.call_id] = call
            step.calls.append(call)
        elif kind == "tool_output_delta":
            call_or_none = calls.get(str(payload.get("call_id", "")))
            if call_or_none is not None and not call_or_none.finished:
                call_or_none.output += str(payload.get("text", ""))
        elif kind == "tool_result":
            call_or_none = calls.get(str(payload.get("call_id", "")))
            if call_or_none is not None:
                call_or_none.output = str(payload.get("output", call_or_none.output))
                call_or_none.is_error = bool(payload.get("is_error"))
                call_or_none.exit_code = payload.get("exit_code")
                call_or_none.duration = payload.get("duration")
                call_or_none.finished = True
        elif kind == "error":
            message = str(payload.get("message", ""))
            (step.errors if step is not None else notes).append(message)
        elif kind == "finished":
            finished = payload
        elif kind == "artifacts" and payload.get("note"):
            notes.append(str(payload["note"]))
    return Trajectory(steps=[steps[k] for k in sorted(steps)], finished=finished, notes=notes)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def run_events_export(*, run: Run) -> dict[str, Any]:
    """The whole trajectory as plain JSON (for the export button)."""
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
        "events": [
            {"seq": e.seq, "kind": e.kind, "payload": e.payload, "at": e.created_at.isoformat()}
            for e in RunEvent.objects.filter(run=run).order_by("seq")
        ],
        "artifacts": [
            {"path": a.path, "kind": a.kind, "size": a.size, "content_type": a.content_type}
            for a in run.artifacts.all()
        ],
    }
