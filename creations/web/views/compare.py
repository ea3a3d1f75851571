"""Two versions (runs) of a creation side by side, with what changed. Thin: parse, read, render.

Every picture and file comes from the artifact origin (as in galleries): the
versions' own files and previews, and the overlay the preview sandbox drew.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from creations.access import creation_for_viewer_or_404
from creations.artifacts.display import ArtifactDisplay, artifact_displays, derived_url
from creations.compare.results import FileComparison, LineDiff, RunComparison
from creations.compare.selectors import run_comparison
from creations.compare.services import comparison_request
from creations.models import FINAL_STATUSES, Artifact, Creation, Run
from creations.web.csp import with_platform_csp

RUN_ID = re.compile(r"[0-9]{1,12}")
# The page looks again every 2 s while details are being made, for about this many looks: a worker
# that cannot make them (none running, no sandbox starting) must not keep a tab polling forever.
MAX_LOOKS = 90


@dataclass
class DiffLine:
    kind: str  # "add", "del", "hunk" or "same": a CSS class
    text: str


@dataclass
class FileView:
    item: FileComparison
    a: ArtifactDisplay | None = None
    b: ArtifactDisplay | None = None
    overlay_url: str = ""
    diff: list[DiffLine] = field(default_factory=list)


@with_platform_csp
@require_GET
def creation_compare(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = creation_for_viewer_or_404(pk=pk, user=request.user)
    creation = viewing.creation
    versions = list(creation.runs.select_related("started_by").filter(status__in=FINAL_STATUSES).order_by("created_at"))
    context: dict[str, object] = {
        "creation": creation,
        "workspace": creation.workspace if viewing.is_member else None,
        "versions": versions,
        "error": "",
        "comparison": None,
    }
    pair = _chosen_pair(request, creation, versions)
    status = 200
    if pair is not None:
        try:
            comparison = run_comparison(run_a=pair[0], run_b=pair[1], user=request.user)
        except ValidationError as error:
            context["error"], status = " ".join(error.messages), 400
        else:
            comparison_request(comparison=comparison)
            context.update(_page(comparison, request.user))
            context.update(_next_look(request, pending=comparison.pending))
    return render(request, "creations/compare.html", context, status=status)


def _chosen_pair(request: HttpRequest, creation: Creation, versions: list[Run]) -> tuple[Run, Run] | None:
    """The runs `?a=` and `?b=` name, or by default the creation's two latest finished runs (older first)."""
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    if not a and not b:
        return (versions[-2], versions[-1]) if len(versions) >= 2 else None
    if not (RUN_ID.fullmatch(a) and RUN_ID.fullmatch(b)):
        raise Http404("Choose two runs of this creation to compare.")
    runs = Run.objects.select_related("creation__workspace").in_bulk([int(a), int(b)])
    if int(a) not in runs or int(b) not in runs:
        raise Http404("No such run.")
    run_a, run_b = runs[int(a)], runs[int(b)]
    if run_a.creation_id != creation.pk and run_b.creation_id == creation.pk:
        run_a, run_b = run_b, run_a  # so the error names the stranger as the other creation's
    if run_a.creation_id != creation.pk:
        raise Http404("No such run of this creation.")
    return run_a, run_b


def _page(comparison: RunComparison, user: User | AnonymousUser) -> dict[str, object]:
    artifacts: list[Artifact] = [a for item in comparison.files for a in (item.a, item.b) if a is not None]
    displays = {display.artifact.pk: display for display in artifact_displays(artifacts, user=user)}
    views = []
    for item in comparison.files:
        view = FileView(
            item=item,
            a=displays.get(item.a.pk) if item.a else None,
            b=displays.get(item.b.pk) if item.b else None,
        )
        if item.detail and item.detail.overlay:
            view.overlay_url = derived_url(run_id=comparison.run_b.pk, user=user, name=item.detail.overlay)
        if item.detail and isinstance(item.detail.lines, LineDiff):
            view.diff = _diff_lines(item.detail.lines.diff)
        views.append(view)
    return {
        "comparison": comparison,
        "run_a": comparison.run_a,
        "run_b": comparison.run_b,
        "changed": [view for view in views if view.item.state == "changed"],
        "added": [view for view in views if view.item.state == "added"],
        "removed": [view for view in views if view.item.state == "removed"],
        "unchanged": [view for view in views if view.item.state == "unchanged"],
    }


def _next_look(request: HttpRequest, *, pending: bool) -> dict[str, object]:
    """Where the page looks again for details still being made, or that it has given up."""
    looks = request.GET.get("look", "0")
    count = int(looks) if RUN_ID.fullmatch(looks) else 0
    if not pending or count >= MAX_LOOKS:
        return {"next_look_url": "", "gave_up": pending}
    query = request.GET.copy()
    query["look"] = str(count + 1)
    return {"next_look_url": f"{request.path}?{query.urlencode()}", "gave_up": False}


def _diff_lines(diff: str) -> list[DiffLine]:
    """A unified diff's lines with their kind; the template escapes their text."""
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    return [DiffLine(kind=kinds.get(line[:1], "same"), text=line) for line in diff.splitlines()]
