"""Comparing two runs (versions) of one creation: which files were added, removed and changed,
and what changed within them (pixels, lines, media facts), as the compare page shows it.

Who may compare is decided by the comparison's own selector (creations.compare.selectors),
which asks the one permission check the pages ask.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import Http404, HttpRequest
from ninja import Router

from api.auth import caller
from api.schemas.compare import ComparisonOut
from creations.artifacts.display import derived_url
from creations.compare.results import Detail, Failed, FileComparison, LineDiff, MediaFacts, PixelDiff, RunComparison
from creations.compare.selectors import run_comparison
from creations.compare.services import comparison_request
from creations.models import Artifact, Run

router = Router(tags=["runs"])


@router.get(
    "/{run_id}/compare/{other_run_id}",
    response=ComparisonOut,
    summary="Compare two runs of a creation",
    description=(
        "What changed from run `run_id` to run `other_run_id` (two finished runs of one creation): files "
        "matched by path and compared by sha256, and for a changed file its pixel difference (pictures, "
        "poster frames, page screenshots), line diff (text, markdown, HTML, code) or media facts (video, "
        "audio), worked out in a sandbox. While `pending` is true, ask again in a few seconds."
    ),
)
def compare_runs(request: HttpRequest, run_id: int, other_run_id: int) -> dict[str, Any]:
    runs = Run.objects.select_related("creation__workspace").in_bulk([run_id, other_run_id])
    if run_id not in runs or other_run_id not in runs:
        raise Http404("No such run.")
    user = caller(request)
    comparison = run_comparison(run_a=runs[run_id], run_b=runs[other_run_id], user=user)
    comparison_request(comparison=comparison)
    return {
        "creation_id": comparison.run_a.creation_id,
        "run_id": run_id,
        "other_run_id": other_run_id,
        "pending": comparison.pending,
        "files": [_file(item, comparison, user) for item in comparison.files],
    }


def _version(artifact: Artifact | None) -> dict[str, Any] | None:
    if artifact is None:
        return None
    return {"artifact_id": artifact.pk, "kind": artifact.kind, "size": artifact.size, "sha256": artifact.sha256 or None}


def _file(item: FileComparison, comparison: RunComparison, user: User) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "path": item.path,
        "state": item.state.value,
        "kind": item.kind,
        "a": _version(item.a),
        "b": _version(item.b),
        "detail_state": item.detail_state.value,
        "note": item.note,
    }
    if item.detail is not None:
        answer.update(_detail(item.detail, run_b=comparison.run_b, user=user))
    return answer


def _detail(detail: Detail, *, run_b: Run, user: User) -> dict[str, Any]:
    answer: dict[str, Any] = {}
    if isinstance(detail.pixels, PixelDiff):
        overlay = derived_url(run_id=run_b.pk, user=user, name=detail.overlay) if detail.overlay else None
        answer["pixels"] = {
            **detail.pixels.model_dump(),
            "percent_changed": round(detail.pixels.percent_changed, 4),
            "overlay_url": overlay,
        }
    elif isinstance(detail.pixels, Failed):
        answer["pixels"] = {"error": detail.pixels.error}
    if isinstance(detail.lines, LineDiff | Failed):
        answer["lines"] = detail.lines.model_dump()
    if detail.media is not None:
        answer["media"] = {
            side: facts.model_dump() if isinstance(facts, MediaFacts | Failed) else {}
            for side, facts in (("a", detail.media.a), ("b", detail.media.b))
        }
    return answer
