"""Admission: which queued run starts next, and why the others wait.

Slots are derived, not counted. A workspace's slots in use are its runs in
flight (starting or running); at most `Workspace.quota_concurrent_runs` of
them at once. Nothing is reserved apart from the run's own status, so a
final status frees the slot by construction, exactly once (run_finish is a
conditional UPDATE), whoever ends the run: its worker, a cancel, or the
reaper after the worker died. A counter would have to be given back on each
of those paths and would drift the first time one was missed.

Fair order. Take each workspace's active runs, in flight first and then its
queued runs oldest first; a queued run's *place* is its position in that
list (1-based): the place-th slot of its workspace it would take. It is
admissible when place <= quota. Admissible runs start in order of:

1. place: a workspace's n-th run at once before anyone's (n+1)-th, so a
   workspace with 50 queued runs delays another workspace's single run by
   at most the one run that was already being started;
2. then the workspace served least recently (its last run started longest
   ago, or none since the oldest waiting run arrived, or in the last
   hour): round robin. Without
   it, when there are more workspaces than workers, most of them have
   nothing in flight, every run has place 1, and the oldest runs would win
   every time: one workspace's early flood would be served before anyone
   who arrived after it (bench/admission.py measured exactly that);
3. then the oldest run. Within a workspace, runs start oldest first.

(Weighting by quota instead would let a workspace with a large quota take
more of the shared workers; the quota is a cap, not a share.) One SQL query
ranks them, reading each run's workspace from the run itself (`Run.workspace`):
only workspaces with a run queued and a slot free are looked at; a window
numbers their queued runs after their runs in flight; and when each was last
served is one probe of an index on (workspace, started_at), counting only runs
started since the oldest waiting run arrived.

Claiming (`run_claim_next`, called by the Celery task on each wake-up):
for each candidate, fairest first, lock the run (SKIP LOCKED: another worker
is on it, try the next), lock its workspace's row (claims in one workspace
take turns, so the recount below cannot be raced), recount its runs in
flight, and move it queued -> starting with a conditional UPDATE. Locks are
always taken run first, then workspace. A worker that finds nothing to
claim returns at once: a waiting run holds no worker thread. SQLite ignores
row locks; its transactions take the write lock when they begin
(config/settings/database.py), which serializes claims there instead.

A queued run that cannot start is told why (`Run.reason`, and a status event
for open pages) when its submit or its wake-up finds its workspace full;
being claimed clears it.

The queue itself is bounded: a workspace may have at most
RUN_QUEUED_MAX_PER_WORKSPACE runs queued, and a new run past that is refused
before anything of it is written (`queue_room_check`, under the workspace's
row lock, so parallel submissions cannot pass it together). The queued runs
are counted from an index of their own, so the check costs the same however
many runs a workspace has had.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.db.models.signals import post_save
from django.utils import timezone

from creations.models import IN_FLIGHT_STATUSES, Run, RunStatus
from creations.runs import queue
from creations.runs.state import run_mark_starting, run_mark_waiting
from workspaces.models import Workspace

log = logging.getLogger(__name__)

# Candidates read per query; more are read only when these were all taken by other workers.
CANDIDATES_PER_QUERY = 8
# Who was served least recently is read from the runs started since the oldest waiting run
# arrived, and within this long: a queue hours old must not make each claim read hours of runs.
SERVED_HORIZON = timedelta(hours=1)


def _admissible_runs(*, limit: int | None = None) -> list[tuple[int, int]]:
    """(run id, workspace id) of the queued runs that may start now, fairest first.

    Read per workspace from the run's own workspace column and indexes of their own, so it costs
    about the same with 5,000 runs queued as with 50: only workspaces with queued runs and a slot
    free are looked at, their runs in flight counted, their queued runs numbered in order, and
    when each last had a run started found by one index probe."""
    run, workspace = Run._meta.db_table, Workspace._meta.db_table
    queued, starting, running = RunStatus.QUEUED.value, RunStatus.STARTING.value, RunStatus.RUNNING.value
    # MATERIALIZED: each part is worked out once, not again for every queued run that uses it.
    sql = f"""
        WITH waiting AS MATERIALIZED (
            SELECT DISTINCT q.workspace_id FROM {run} q WHERE q.status = %s
        ),
        counted AS MATERIALIZED (
            SELECT w.id AS workspace_id, w.quota_concurrent_runs AS quota,
                   (SELECT COUNT(*) FROM {run} f WHERE f.workspace_id = w.id AND f.status IN (%s, %s)) AS in_flight
            FROM waiting
            JOIN {workspace} w ON w.id = waiting.workspace_id
        ),
        open AS MATERIALIZED (
            SELECT workspace_id, quota, in_flight,
                   (SELECT MAX(s.started_at) FROM {run} s
                    WHERE s.workspace_id = counted.workspace_id AND s.started_at >= %s
                      AND s.started_at >= (SELECT MIN(o.created_at) FROM {run} o WHERE o.status = %s)
                   ) AS last_started_at
            FROM counted
            WHERE in_flight < quota
        ),
        placed AS (
            SELECT r.id, r.created_at, r.workspace_id, open.quota, open.last_started_at,
                   open.in_flight + ROW_NUMBER() OVER (PARTITION BY r.workspace_id ORDER BY r.created_at, r.id) AS place
            FROM open
            JOIN {run} r ON r.workspace_id = open.workspace_id AND r.status = %s
        )
        SELECT id, workspace_id
        FROM placed
        WHERE place <= quota
        ORDER BY place, last_started_at NULLS FIRST, created_at, id
    """  # noqa: S608 - the table names are our models'; every value is a parameter
    served_since = timezone.now() - SERVED_HORIZON
    params: list[str | int | datetime] = [queued, starting, running, served_since, queued, queued]
    if limit is not None:
        sql += " LIMIT %s"
        params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(int(run_id), int(workspace_id)) for run_id, workspace_id in cursor.fetchall()]


def admissible_queued_runs() -> list[int]:
    """Ids of the queued runs that may start now (their workspace has a slot for them), fairest first."""
    return [run_id for run_id, _ in _admissible_runs()]


class _Claim(Enum):
    CLAIMED = "claimed"
    TAKEN = "taken"  # another worker has it, or it is no longer queued
    FULL = "full"  # its workspace's slots filled up meanwhile


def run_claim_next(*, worker: str, host: str = "", run_id: int | None = None) -> int | None:
    """Start the fairest admissible queued run: move it to starting for `worker`
    (on worker host `host`) and return its id; None when no queued run may start now.

    `run_id` is the run the wake-up was sent for: when nothing can be claimed
    (or another run was), and it still waits, it is told why."""
    tried: set[int] = set()
    full: set[int] = set()
    claimed: int | None = None
    while claimed is None:
        # Skip what was tried in Python, not in SQL: leaving a row out would move the places after it.
        batch = [
            (candidate, workspace_id)
            for candidate, workspace_id in _admissible_runs(limit=len(tried) + CANDIDATES_PER_QUERY)
            if candidate not in tried
        ]
        if not batch:
            break
        for candidate, workspace_id in batch:
            tried.add(candidate)
            if workspace_id in full:
                continue
            outcome = _claim(candidate, workspace_id=workspace_id, worker=worker, host=host)
            if outcome is _Claim.CLAIMED:
                claimed = candidate
                break
            if outcome is _Claim.FULL:
                full.add(workspace_id)
    if run_id is not None and run_id != claimed:
        try:
            run_note_waiting(run_id=run_id)
        except DatabaseError:
            if claimed is None:
                raise  # nothing claimed: the task may retry
            # A run was claimed: it must be run, whatever happened to the note.
            log.warning("Could not say why run %s waits", run_id, exc_info=True)
    return claimed


def _claim(run_id: int, *, workspace_id: int, worker: str, host: str) -> _Claim:
    with transaction.atomic():
        locked = Run.objects.select_for_update(skip_locked=True).filter(pk=run_id, status=RunStatus.QUEUED)
        if not list(locked.values_list("pk", flat=True)):
            return _Claim.TAKEN
        quota = (
            Workspace.objects.select_for_update()
            .filter(pk=workspace_id)
            .values_list("quota_concurrent_runs", flat=True)
            .first()
        )
        if quota is None or in_flight_count(workspace_id) >= quota:
            return _Claim.FULL
        return _Claim.CLAIMED if run_mark_starting(run_id=run_id, worker=worker, host=host) else _Claim.TAKEN


class RunQueueFull(ValidationError):
    """A new run refused: its workspace has as many runs queued as it may."""


def queue_room_check(*, workspace_id: int) -> None:
    """Refuse a new run (raise RunQueueFull, saying why) while the workspace has
    RUN_QUEUED_MAX_PER_WORKSPACE runs queued.

    Takes the workspace's row lock, held until the caller's transaction ends: call it in
    the transaction that queues the run, so parallel submissions are counted one after the other."""
    Workspace.objects.select_for_update(no_key=True).filter(pk=workspace_id).values_list("pk", flat=True).first()
    bound = settings.RUN_QUEUED_MAX_PER_WORKSPACE
    if queued_count(workspace_id) >= bound:
        raise RunQueueFull(
            f"This workspace has {bound} runs waiting to start, as many as it may queue: wait for some of "
            "them to start, or cancel some, then ask again.",
            code="queue_full",
        )


def queued_count(workspace_id: int) -> int:
    """The workspace's runs waiting for a slot; read from the queued runs' own index
    (`run_queued_in_workspace`), so it costs the same however many runs the workspace has had."""
    return Run.objects.filter(workspace_id=workspace_id, status=RunStatus.QUEUED).count()


def in_flight_count(workspace_id: int) -> int:
    """The workspace's slots in use: its runs starting or running."""
    return Run.objects.filter(workspace_id=workspace_id, status__in=IN_FLIGHT_STATUSES).count()


def run_note_waiting(*, run_id: int) -> None:
    """If this queued run must wait for its workspace's slots, say so on it (once)."""
    run = (
        Run.objects.filter(pk=run_id, status=RunStatus.QUEUED)
        .values("created_at", "workspace_id", "workspace__quota_concurrent_runs")
        .first()
    )
    if run is None:
        return
    workspace_id, quota = run["workspace_id"], run["workspace__quota_concurrent_runs"]
    in_use = in_flight_count(workspace_id)
    earlier = Q(created_at__lt=run["created_at"]) | Q(created_at=run["created_at"], pk__lt=run_id)
    ahead = Run.objects.filter(earlier, workspace_id=workspace_id, status=RunStatus.QUEUED).count()
    if in_use + ahead < quota:
        return  # a slot is free for it: a wake-up will start it
    run_mark_waiting(run_id=run_id, reason=waiting_reason(in_use=in_use, ahead=ahead, quota=quota))


def waiting_reason(*, in_use: int, ahead: int, quota: int) -> str:
    """What a person reads on a run that waits for its workspace's slots."""
    if in_use >= quota:
        runs = "run" if quota == 1 else "runs"
        return f"Waiting: {in_use} of {quota} {runs} in use in this workspace. It starts when one of them ends."
    # No count here: it would go stale as the runs ahead start, and it is only said once.
    return f"Waiting: this workspace runs {quota} at a time, and its earlier runs start first."


# --- a quota raised ----------------------------------------------------------


def connect() -> None:
    """A workspace saved with a higher quota has slots free at once: wake a worker
    for each of its runs that may start now (creations.apps connects this)."""
    post_save.connect(_workspace_saved, sender=Workspace, dispatch_uid="admission-workspace-saved")


def _workspace_saved(sender: Any, instance: Workspace, created: bool, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if created or (update_fields is not None and "quota_concurrent_runs" not in update_fields):
        return
    workspace_id = instance.pk

    def wake() -> None:
        if not Run.objects.filter(status=RunStatus.QUEUED, workspace_id=workspace_id).exists():
            return
        for run_id, run_workspace_id in _admissible_runs():
            if run_workspace_id == workspace_id:
                try:
                    queue.send_wake_up(run_id)
                except Exception as error:  # the reaper wakes workers for them later
                    log.warning("Could not wake a worker for run %s: %s", run_id, error)
                    return

    transaction.on_commit(wake)
