"""Reads about a creation's versions: what a refine carries from the versions before it."""

from __future__ import annotations

from creations.models import Run
from creations.runs.inputs import renamed_inputs
from sandboxes.agent import Continuation, EarlierVersion


def version_lineage(run: Run) -> list[Run]:
    """The versions `run` continues from, first to last (its parent last), in one query."""
    runs = {
        r.pk: r
        for r in Run.objects.filter(creation_id=run.creation_id).only(
            "pk", "parent_id", "version", "instruction", "summary", "status", "reason"
        )
    }
    lineage: list[Run] = []
    current = runs.get(run.parent_id) if run.parent_id else None
    while current is not None and current not in lineage:
        lineage.append(current)
        current = runs.get(current.parent_id) if current.parent_id else None
    return lineage[::-1]


def run_continuation(run: Run, *, left_out: str = "") -> Continuation | None:
    """What the agent of a refine is told about the work so far; None for a run from the brief."""
    if run.parent_id is None:
        return None
    lineage = version_lineage(run)
    brief = run.creation.brief
    earlier = [
        EarlierVersion(request=version.instruction or brief, summary=version.summary) for version in lineage
    ]
    if not earlier or lineage[0].instruction:
        earlier.insert(0, EarlierVersion(request=brief, summary=""))
    return Continuation(
        instruction=run.instruction,
        from_version=lineage[-1].version if lineage else 0,
        earlier=earlier,
        left_out=left_out,
        renamed_inputs=renamed_inputs(run.creation),
    )


def version_files(run: Run) -> dict[str, str]:
    """Each file `run` left, by path, with its SHA-256 (blank for files stored before it was recorded)."""
    return dict(run.artifacts.values_list("path", "sha256"))


def files_identical_to_parent(run: Run) -> bool:
    """Whether `run` left exactly the files of the version it continues from: the same paths with
    the same bytes (SHA-256). False for a first version, and when either side has a file whose
    digest was never recorded (nothing proves them equal)."""
    if run.parent_id is None:
        return False
    parent = Run.objects.only("pk").get(pk=run.parent_id)
    mine, theirs = version_files(run), version_files(parent)
    return mine == theirs and all(mine.values())
