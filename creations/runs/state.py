"""The one owner of a run's row: every write to `Run` is a function here.

A run moves queued -> starting -> running -> one final status. Every status
change is an UPDATE that only matches the expected current status, so two
actors (a worker and the reaper, a cancel and a worker, a redelivered task)
can never both win. Each change is recorded as a `status` event; the final
one is written in the same transaction as the status, so it is always the
run's last event.

The other fields change here too, each by one conditional UPDATE: the cancel
request, heartbeats, live usage counters, the reason a queued run waits and
the time it has had a free slot since (admission decides both). The
exceptions are the event log's own counters: the event store
(`creations.events.store`) bumps `last_seq` in the very statement that inserts the
events, which is what keeps a run's events gapless, and adds to `event_file_bytes`
as it stores a long field in a file; the event log sits below the run lifecycle
(this module writes its final event through it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from creations.events.schema import StatusChange, UsageSummary, stored_form
from creations.events.storable import storable_text
from creations.events.store import announce_events, insert_events_locked, store_events
from creations.models import ACTIVE_STATUSES, FINAL_STATUSES, IN_FLIGHT_STATUSES, Creation, Run, RunStatus
from creations.runs import queue
from creations.runs.signals import run_ended, run_waiting, send_robustly, send_run_finished_on_commit
from creations.usage.counters import USAGE_COLUMNS, run_usage, usage_columns
from creations.usage.ledger import usage_record_write
from sandboxes.agent.usage import RunUsage

STATUS_EVENT = "status"


def run_create_queued(
    *, creation: Creation, started_by: User, parent: Run | None = None, instruction: str = "", scheduled: bool = False
) -> Run:
    """The next version of `creation`, queued, asked for by `started_by` (the caller wakes a
    worker on commit); a refine names the version it continues from and what should change,
    and `scheduled` says a schedule asked for it in `started_by`'s name.
    Call it inside a transaction: the creation's row lock numbers versions one at a time."""
    Creation.objects.select_for_update().filter(pk=creation.pk).values_list("pk", flat=True).first()
    return Run.objects.create(
        creation=creation, started_by=started_by, parent=parent, instruction=instruction, scheduled=scheduled
    )


def run_mark_starting(*, run_id: int, worker: str, host: str = "") -> bool:
    """Claim a queued run for this worker (on worker host `host`); False when someone
    else has it (or it was cancelled).

    Admission calls it holding the workspace's lock (creations.runs.admission): the
    status and its event commit together, and the event is announced after."""
    now = timezone.now()
    with transaction.atomic():
        claimed = Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
            status=RunStatus.STARTING,
            started_at=now,
            heartbeat_at=now,
            worker=worker[:200],
            sandbox_host=host[:63],
            reason="",
            admissible_since=None,
        )
        if claimed:
            _store_status_on_commit(run_id, StatusChange(status=RunStatus.STARTING, reason="", final=False))
    return bool(claimed)


def run_mark_waiting(*, run_id: int, reason: str) -> bool:
    """Say why a queued run waits (its workspace's slots are in use); a status
    event tells open pages. False when it had started, ended, or said so already."""
    with transaction.atomic():
        changed = Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).exclude(reason=reason).update(reason=reason)
        if changed:
            _store_status_on_commit(run_id, StatusChange(status=RunStatus.QUEUED, reason=reason, final=False))
            send_robustly(run_waiting, run_id=run_id, reason=reason)
    return bool(changed)


def runs_note_admissible(*, run_ids: Collection[int]) -> None:
    """Of the queued runs, exactly `run_ids` have a free slot now: stamp when each
    first had one (`admissible_since`), and clear the stamp of those that lost it
    (their workspace's quota was lowered)."""
    queued = Run.objects.filter(status=RunStatus.QUEUED)
    queued.filter(pk__in=run_ids, admissible_since__isnull=True).update(admissible_since=timezone.now())
    queued.filter(admissible_since__isnull=False).exclude(pk__in=run_ids).update(admissible_since=None)


def _store_status_on_commit(run_id: int, change: StatusChange) -> None:
    """Store a status event in the caller's transaction; announce it once that commits."""
    events = insert_events_locked(run_id, [(STATUS_EVENT, stored_form(change))], require_active=True) or []
    transaction.on_commit(lambda: announce_events(run_id, events))


def run_mark_running(*, run_id: int, sandbox_id: str) -> bool:
    moved = Run.objects.filter(pk=run_id, status=RunStatus.STARTING).update(
        status=RunStatus.RUNNING, sandbox_id=sandbox_id[:100], heartbeat_at=timezone.now()
    )
    if moved:
        running = StatusChange(status=RunStatus.RUNNING, reason="", final=False)
        store_events(run_id, [(STATUS_EVENT, stored_form(running))])
    return bool(moved)


def run_finish(
    *,
    run_id: int,
    status: RunStatus,
    reason: str,
    from_statuses: Iterable[RunStatus] = ACTIVE_STATUSES,
    usage: RunUsage | None = None,
    summary: str = "",
) -> bool:
    """Give an active run its final status, reason, usage and final event; False if it already had one.

    `usage` is the run's whole usage as its worker counted it, and replaces the live counters;
    without one (a run ended by someone else: the reaper, a cancel before it started) they stand.

    The creation then shows this version in the gallery when it succeeded, or when no
    succeeded version is shown yet (its files made so far are better than none)."""
    if status not in FINAL_STATUSES:
        raise ValueError(f"{status!r} is not a final run status")
    reason = storable_text(reason)  # it may quote a model's or a command's words
    fields: dict[str, Any] = {
        "status": status,
        "reason": reason,
        "finished_at": timezone.now(),
        "summary": storable_text(summary),
        **(usage_columns(usage) if usage is not None else {}),
    }
    with transaction.atomic():
        finished = Run.objects.filter(pk=run_id, status__in=list(from_statuses)).update(**fields)
        if not finished:
            return False
        _show_if_better(run_id=run_id, status=status)
        run = (
            Run.objects.select_related("creation")
            .only(*USAGE_COLUMNS, "started_at", "creation__workspace")
            .get(pk=run_id)
        )
        final = StatusChange(status=status, reason=reason, final=True, usage=UsageSummary.of(run_usage(run)))
        events = insert_events_locked(run_id, [(STATUS_EVENT, stored_form(final))], require_active=False) or []
        # First of the commit's callbacks: watchers see the run end without waiting for the webhooks,
        # schedules and evaluations told of it below.
        transaction.on_commit(lambda: announce_events(run_id, events), robust=True)
        usage_record_write(run_id=run_id)
        _wake_if_a_slot_freed(run)
        send_run_finished_on_commit(run_id=run_id, status=status)
        send_robustly(run_ended, run_id=run_id, status=status, reason=reason)
    return True


def _show_if_better(*, run_id: int, status: RunStatus) -> None:
    creations = Creation.objects.filter(runs__pk=run_id)
    if status != RunStatus.SUCCEEDED:
        creations = creations.filter(Q(shown_run__isnull=True) | ~Q(shown_run__status=RunStatus.SUCCEEDED))
    Creation.objects.filter(pk__in=creations.values("pk")).update(shown_run_id=run_id)


def creation_show_version(*, creation_id: int, run_id: int) -> bool:
    """Make a version of the creation the one its gallery shows (a restore); False if it is not one of its runs."""
    return bool(
        Creation.objects.filter(pk=creation_id, runs__pk=run_id).update(shown_run_id=run_id)
    )


def _wake_if_a_slot_freed(run: Run) -> None:
    """A run that had started held one of its workspace's slots (slots in use are
    its runs in flight), so ending it frees one: the first waiting run of that
    workspace may start now, and it needs a wake-up to. Runs of other workspaces
    that can start already have theirs pending (creations.runs.queue)."""
    if run.started_at is None:
        return
    if Run.objects.filter(status=RunStatus.QUEUED, creation__workspace_id=run.creation.workspace_id).exists():
        queue.send_wake_up_on_commit(robust=True)  # run_finish must not fail for the broker's sake


def run_request_cancel(*, run_id: int, user: User | AnonymousUser) -> bool:
    """Note who asked an active run to stop; False when it had ended or was already asked."""
    return bool(
        Run.objects.filter(pk=run_id, status__in=ACTIVE_STATUSES, cancel_requested_at__isnull=True).update(
            cancel_requested_at=timezone.now(), cancelled_by=user if user.is_authenticated else None
        )
    )


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


def runs_beat(*, run_ids: Collection[int]) -> set[int]:
    """Say these runs are alive (one UPDATE); returns the ids that are still in flight."""
    in_flight = Run.objects.filter(pk__in=run_ids, status__in=IN_FLIGHT_STATUSES)
    if in_flight.update(heartbeat_at=timezone.now()) == len(run_ids):
        return set(run_ids)
    return set(in_flight.values_list("pk", flat=True))


def run_mark_requeued(*, run_id: int, reason: str) -> bool:
    """Say a queued run was woken for again; True for exactly one caller, whoever else reaps."""
    return bool(Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).exclude(reason=reason).update(reason=reason))
