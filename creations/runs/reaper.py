"""Ending runs whose worker died, and removing what they left behind.

A worker beats each running run's heartbeat every few seconds. When a
starting/running run's heartbeat is older than RUN_STALE_AFTER_SECONDS, its
worker is gone (SIGKILL, OOM, lost host): the run is ended `failed` with a
reason that says so (the conditional UPDATE makes sure a live worker that was
merely slow cannot also finish it), and its sandbox containers are removed.
Events stored before the crash stay; the final event comes after them.

A queued run that may start (its workspace has a slot for it,
creations.runs.admission) but that nobody started may have lost its
wake-up (a Redis restart without persistence, a purged queue). Each pass
notes since when each queued run has been admissible; after
RUN_QUEUED_REQUEUE_AFTER_SECONDS of that, a worker is woken for it once more
(a spare wake-up is harmless), and after RUN_QUEUED_MAX_SECONDS it is ended
`failed` with a reason that says so. Time spent waiting for the workspace's
own runs to end does not count: a long queue in a busy workspace is not a
fault. So every run reaches a final status.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from creations.models import ACTIVE_STATUSES, IN_FLIGHT_STATUSES, Run, RunStatus
from creations.runs import queue
from creations.runs.admission import admissible_queued_runs
from creations.runs.state import run_finish, run_mark_requeued, runs_note_admissible

log = logging.getLogger(__name__)

def worker_lost_reason(host: str) -> str:
    """Why a run whose worker stopped beating ended, naming its host when known:
    with several worker hosts, the one that went down is what an operator looks for."""
    where = f" on worker host “{host}”" if host else ""
    return (
        f"The worker running this run{where} stopped responding (it crashed, was restarted, or its host went "
        "down). Events up to that moment are kept; start the run again to retry."
    )


REQUEUED_REASON = "Waiting for a worker: it was queued again because no worker had picked it up."
QUEUE_LOST_REASON = (
    "No worker picked this run up in time (its place in the queue was lost, or no worker is running). "
    "Nothing was run; start it again."
)


def stale_runs() -> list[tuple[int, str]]:
    """In-flight runs whose worker stopped beating, with the host each ran on."""
    cutoff = timezone.now() - timedelta(seconds=settings.RUN_STALE_AFTER_SECONDS)
    in_flight = Run.objects.filter(status__in=IN_FLIGHT_STATUSES)
    stale = in_flight.filter(Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff))
    return list(stale.values_list("pk", "sandbox_host"))


def reap_stale_runs() -> list[int]:
    """End stale runs as failed and remove this host's sandboxes of them (a dead
    host's own are removed by its janitor when it is back); returns the ids reaped.
    Any worker's reaper ends any host's runs: the heartbeats are in the database."""
    reaped = []
    for run_id, host in stale_runs():
        if run_finish(
            run_id=run_id,
            status=RunStatus.FAILED,
            reason=worker_lost_reason(host),
            from_statuses=IN_FLIGHT_STATUSES,
        ):
            log.warning("Reaped run %s (host %r): its worker stopped sending heartbeats.", run_id, host)
            reaped.append(run_id)
    if reaped:
        remove_ended_run_sandboxes()
    return reaped + reap_stuck_queued_runs()


def reap_stuck_queued_runs() -> list[int]:
    """Wake a worker once more for runs that could have started long ago; end
    those that could have for too long. Returns the ids ended."""
    runs_note_admissible(run_ids=admissible_queued_runs())
    now = timezone.now()
    # Only runs stamped admissible (now, and since the stamp): never one that waits for its workspace's slots.
    admissible = Run.objects.filter(status=RunStatus.QUEUED, admissible_since__isnull=False)
    requeue_cutoff = now - timedelta(seconds=settings.RUN_QUEUED_REQUEUE_AFTER_SECONDS)
    for run_id in admissible.filter(admissible_since__lt=requeue_cutoff).values_list("pk", flat=True):
        # The conditional UPDATE makes the wake-up happen once, whoever else reaps.
        if run_mark_requeued(run_id=run_id, reason=REQUEUED_REASON):
            log.warning("Run %s could start but was still queued; waking a worker for it again.", run_id)
            try:
                queue.send_wake_up(run_id)
            except Exception as error:  # the broker is down: the run is ended later if it stays queued
                log.warning("Could not wake a worker for run %s: %s", run_id, error)
    ended = []
    give_up_cutoff = now - timedelta(seconds=settings.RUN_QUEUED_MAX_SECONDS)
    for run_id in admissible.filter(admissible_since__lt=give_up_cutoff).values_list("pk", flat=True):
        if run_finish(
            run_id=run_id, status=RunStatus.FAILED, reason=QUEUE_LOST_REASON, from_statuses=[RunStatus.QUEUED]
        ):
            log.warning("Ended run %s: no worker picked it up.", run_id)
            ended.append(run_id)
    return ended


def run_is_active(run_id: str | int) -> bool:
    """For the sandbox janitor: does this run still need its sandbox?

    A run id that is not a number was not made by the run service (tests,
    tools): it is not ours to judge, so it counts as active."""
    try:
        pk = int(run_id)
    except (TypeError, ValueError):
        return True
    return Run.objects.filter(pk=pk, status__in=ACTIVE_STATUSES).exists()


def remove_ended_run_sandboxes() -> int:
    """Remove this host's sandboxes of runs that have ended (labelled or named after them)."""
    from sandboxes.janitor import sweep

    try:
        return len(sweep(run_is_active))
    except Exception as error:  # Docker down: the periodic janitor retries
        log.warning("Could not remove the sandboxes of ended runs: %s", error)
        return 0
