"""Reads about one run that its execution decides by."""

from __future__ import annotations

from creations.models import Run


def run_is_scored_not_kept(*, run_id: int) -> bool:
    """True for an evaluation's sandbox task: its outputs are stored and scored, and nobody looks
    at it as a creation, so its /testbed is not kept for a refine and its files get no previews
    (the two take most of a task's time after its agent ends). A refine of it starts from its
    deliverables, as for any version whose /testbed was not kept.

    The evaluation links its item to the run in the transaction that queues the run, so the
    worker, which only sees the run once that commits, always sees the link."""
    # By the reverse name of the evaluation item's link: evaluations sit above the run lifecycle.
    return Run.objects.filter(pk=run_id, evaluation_item__isnull=False).exists()
