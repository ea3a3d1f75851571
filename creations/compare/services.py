"""Making the details of a comparison: in a preview sandbox, on a worker.

Pages and the API read a comparison at once (selectors.py) and ask for what is
missing with `comparison_request`; a worker's `compare_runs` task then calls
`comparison_compute`, which is also what tests and benchmarks call directly.
"""

from __future__ import annotations

import logging

from celery import current_app
from django.core.cache import cache
from django.db import transaction

from creations.compare import store
from creations.compare.results import Detail, DetailState, Failed, FileComparison, MediaPair, RunComparison
from creations.compare.selectors import comparison_files
from creations.models import Run

logger = logging.getLogger(__name__)

COMPARE_TASK_NAME = "creations.compare.tasks.compare_runs"
REQUEST_SECONDS = 60  # one request per pair of runs per web process in this time: a page polls


def comparison_request(*, comparison: RunComparison) -> bool:
    """Ask a worker for the details still missing (once the transaction commits); True when asked now."""
    if not comparison.pending:
        return False
    run_a_id, run_b_id = comparison.run_a.pk, comparison.run_b.pk
    key = f"atelier-compare-request:{run_a_id}:{run_b_id}"
    if not cache.add(key, 1, REQUEST_SECONDS):
        return False

    def send() -> None:
        try:
            current_app.send_task(COMPARE_TASK_NAME, args=[run_a_id, run_b_id])
        except Exception as error:  # the page still shows the file lists; the next look asks again
            cache.delete(key)
            logger.warning("could not ask a worker to compare runs %s and %s: %s", run_a_id, run_b_id, error)

    transaction.on_commit(send)
    return True


def comparison_compute(*, run_a_id: int, run_b_id: int) -> int:
    """Make and keep the detail of every changed file that has none yet; returns how many were made.

    A file the sandbox cannot compare gets a detail saying so (kept: the same pair would fail the same
    way); a sandbox that does not start leaves the details missing, to be asked for again."""
    runs = Run.objects.in_bulk([run_a_id, run_b_id])
    if run_a_id not in runs or run_b_id not in runs:
        return 0
    # Imported here, in the worker that compares: the differ brings the Docker client library, which
    # every web process (asking for comparisons through this module) would otherwise load at start.
    from creations.compare.differ import DifferSession
    from sandboxes.docker_runtime import SandboxError

    comparison = comparison_files(run_a=runs[run_a_id], run_b=runs[run_b_id])
    todo = [item for item in comparison.changed if item.detail_state == DetailState.PENDING and not _kept(item)]
    made = 0
    with DifferSession(label=f"{run_a_id}-{run_b_id}") as session:
        for item in todo:
            a, b = item.versions
            try:
                compared = session.compare(a, b, item.plan)
            except SandboxError as error:
                logger.warning("runs %s and %s: the preview sandbox did not start: %s", run_a_id, run_b_id, error)
                break
            detail, overlay = (compared.detail, compared.overlay) if compared else (_failed(item), None)
            store.detail_put(sha_a=a.sha256, sha_b=b.sha256, plan=item.plan, detail=detail, overlay=overlay)
            made += 1
    return made


def _kept(item: FileComparison) -> bool:
    a, b = item.versions
    return store.detail_get(sha_a=a.sha256, sha_b=b.sha256, plan=item.plan) is not None


def _failed(item: FileComparison) -> Detail:
    failed = Failed(error="This file could not be compared in the preview sandbox (it broke or took too long).")
    return Detail(
        pixels=failed if item.plan.pixels else None,
        lines=failed if item.plan.lines else None,
        media=MediaPair(a=failed, b=failed) if item.plan.media else None,
    )
