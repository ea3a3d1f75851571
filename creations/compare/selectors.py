"""Reading a comparison of two versions (runs) of one creation.

Files are matched by path and compared by sha256 alone: nothing here opens them.
What changed within a changed file (pixels, lines, media facts) is read back
from storage, where the preview sandbox left it (services.py asks for it); until
it is there, that file's detail is `pending`.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import Http404

from creations.access import AnyUser, can_view_creation
from creations.compare import store
from creations.compare.planning import plan_for
from creations.compare.results import DetailState, FileComparison, FileState, RunComparison
from creations.models import Artifact, Run

ARTIFACT_FIELDS = ("id", "run_id", "path", "kind", "size", "sha256", "content_type", "file", "preview", "rendition")


def run_comparison(*, run_a: Run, run_b: Run, user: AnyUser) -> RunComparison:
    """What changed from `run_a` (the older version) to `run_b`, for someone who may see their creation.

    Raises Http404 when they may not (as for the runs themselves), ValidationError
    when the two runs are not of one creation or one has not finished yet."""
    if not can_view_creation(creation=run_a.creation, user=user):
        raise Http404("No such run.")
    if run_b.creation_id != run_a.creation_id and not can_view_creation(creation=run_b.creation, user=user):
        raise Http404("No such run.")  # not even that it belongs elsewhere
    if run_b.creation_id != run_a.creation_id:
        raise ValidationError(
            f"Runs {run_a.pk} and {run_b.pk} are versions of different creations; compare two runs of one creation."
        )
    for run in (run_a, run_b):
        if not run.is_final:
            raise ValidationError(f"v{run.version} has not finished yet; compare it once it has.")
    comparison = comparison_files(run_a=run_a, run_b=run_b)
    for item in comparison.changed:
        _attach_detail(item)
    return comparison


def comparison_files(*, run_a: Run, run_b: Run) -> RunComparison:
    """The two runs' files matched by path: added, removed, changed or unchanged by their sha256.
    No permission check: callers have made theirs (or are the worker)."""
    older = _artifacts(run_a)
    newer = _artifacts(run_b)
    files = []
    for path in sorted(older.keys() | newer.keys()):
        a, b = older.get(path), newer.get(path)
        if a is None:
            files.append(FileComparison(path=path, state=FileState.ADDED, a=None, b=b))
        elif b is None:
            files.append(FileComparison(path=path, state=FileState.REMOVED, a=a, b=None))
        elif a.sha256 and a.sha256 == b.sha256:
            files.append(FileComparison(path=path, state=FileState.UNCHANGED, a=a, b=b))
        else:
            files.append(_changed(path, a, b))
    return RunComparison(run_a=run_a, run_b=run_b, files=files)


def _artifacts(run: Run) -> dict[str, Artifact]:
    return {artifact.path: artifact for artifact in Artifact.objects.filter(run=run).only(*ARTIFACT_FIELDS)}


def _changed(path: str, a: Artifact, b: Artifact) -> FileComparison:
    item = FileComparison(path=path, state=FileState.CHANGED, a=a, b=b)
    if not (a.sha256 and b.sha256):
        item.detail_state = DetailState.UNAVAILABLE
        item.note = "Stored before checksums were kept: it may or may not have changed."
        return item
    planned = plan_for(a, b)
    item.plan, item.note = planned.plan, planned.note
    item.detail_state = DetailState.PENDING if planned.plan else DetailState.NONE
    return item


def _attach_detail(item: FileComparison) -> None:
    if item.detail_state != DetailState.PENDING:
        return
    a, b = item.versions
    detail = store.detail_get(sha_a=a.sha256, sha_b=b.sha256, plan=item.plan)
    if detail is not None:
        item.detail, item.detail_state = detail, DetailState.READY
