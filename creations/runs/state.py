"""Run status changes, each made exactly once by a conditional UPDATE.

queued -> starting -> running -> one final status. Every change is an UPDATE
that only matches the expected current status, so two actors (a worker and
the reaper, a cancel and a worker, a redelivered task) can never both win.
Each change is also recorded as a `status` event; the final one is written in
the same transaction as the status, so it is always the run's last event.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from creations.events.store import announce_events, insert_events_locked, store_events
from creations.models import ACTIVE_STATUSES, FINAL_STATUSES, Run, RunStatus

STATUS_EVENT = "status"


def run_mark_starting(*, run_id: int, worker: str) -> bool:
    """Claim a queued run for this worker; False when someone else has it (or it was cancelled)."""
    now = timezone.now()
    claimed = Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.STARTING, started_at=now, heartbeat_at=now, worker=worker[:200], reason=""
    )
    if claimed:
        store_events(run_id, [(STATUS_EVENT, {"status": RunStatus.STARTING, "reason": "", "final": False})])
    return bool(claimed)


def run_mark_running(*, run_id: int, sandbox_id: str) -> bool:
    moved = Run.objects.filter(pk=run_id, status=RunStatus.STARTING).update(
        status=RunStatus.RUNNING, sandbox_id=sandbox_id[:100], heartbeat_at=timezone.now()
    )
    if moved:
        store_events(run_id, [(STATUS_EVENT, {"status": RunStatus.RUNNING, "reason": "", "final": False})])
    return bool(moved)


def run_finish(
    *,
    run_id: int,
    status: str,
    reason: str,
    from_statuses: Iterable[str] = ACTIVE_STATUSES,
    usage: dict[str, Any] | None = None,
) -> bool:
    """Give an active run its final status, reason, usage and final event; False if it already had one."""
    if status not in FINAL_STATUSES:
        raise ValueError(f"{status!r} is not a final run status")
    fields: dict[str, Any] = {"status": status, "reason": reason, "finished_at": timezone.now(), **(usage or {})}
    with transaction.atomic():
        finished = Run.objects.filter(pk=run_id, status__in=list(from_statuses)).update(**fields)
        if not finished:
            return False
        run = Run.objects.only("steps", "prompt_tokens", "completion_tokens", "sandbox_seconds", "output_bytes").get(
            pk=run_id
        )
        payload = {
            "status": status,
            "reason": reason,
            "final": True,
            "usage": {
                "steps": run.steps,
                "prompt_tokens": run.prompt_tokens,
                "completion_tokens": run.completion_tokens,
                "sandbox_seconds": round(run.sandbox_seconds, 3),
                "output_bytes": run.output_bytes,
            },
        }
        events = insert_events_locked(run_id, [(STATUS_EVENT, payload)], require_active=False)
    announce_events(run_id, events or [])
    return True


def cancelled_reason(*, run_id: int, started: bool) -> str:
    """The reason a cancelled run shows, naming who cancelled it."""
    canceller = Run.objects.filter(pk=run_id).values_list(
        "cancelled_by__first_name", "cancelled_by__last_name", "cancelled_by__username"
    )
    first, last, username = next(iter(canceller), (None, None, None))
    name = f"{first or ''} {last or ''}".strip() or username
    who = f"by {name}" if name else "on request"
    if not started:
        return f"Cancelled {who} before it started."
    return f"Cancelled {who}; the files made until then are kept."


def run_heartbeat(*, run_id: int) -> bool:
    """Say this run is alive; False when it is no longer active (reaped or cancelled while queued)."""
    return bool(
        Run.objects.filter(pk=run_id, status__in=[RunStatus.STARTING, RunStatus.RUNNING]).update(
            heartbeat_at=timezone.now()
        )
    )
