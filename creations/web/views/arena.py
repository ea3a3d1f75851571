"""The arena's pages: a comparison side by side with its vote, and the workspace's leaderboard.
Thin: parse, call a service or selector, render.

Every file comes from the artifact origin, as on a run's page. While a comparison is blind and the
person has not voted, nothing on the page names a model or links to a page that would (the
contestants' creations, their runs): only letters.
"""

from __future__ import annotations

import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from creations.arena.selectors import (
    ComparisonViewing,
    comparison_for_viewer_or_404,
    comparison_tallies,
    comparisons_visible_to,
    workspace_leaderboard,
)
from creations.arena.services import comparison_cancel, vote_cast
from creations.artifacts.display import ArtifactDisplay, artifact_displays
from creations.models import Artifact
from creations.web.csp import with_platform_csp
from workspaces.permissions import may_cancel_comparison, workspace_membership_or_404

LOOK = re.compile(r"[0-9]{1,4}")
# The page looks again every 2 s while contestants run, for about this many looks (an hour): a tab
# left open on a comparison whose worker is gone must not poll forever.
MAX_LOOKS = 1800
# Files shown per contestant; the rest are on its creation's page, once names may be shown.
FILES_SHOWN = 6
TIE = "tie"


def _contestant_files(viewing: ComparisonViewing, user: User) -> dict[int, tuple[list[ArtifactDisplay], int]]:
    """Each contestant run's first files as displayed, and how many it has."""
    run_ids = [contestant.run_id for contestant in viewing.contestants]
    by_run: dict[int, list[Artifact]] = {}
    for artifact in Artifact.objects.filter(run_id__in=run_ids).select_related("run__creation").order_by("path"):
        by_run.setdefault(artifact.run_id, []).append(artifact)
    shown = [artifact for files in by_run.values() for artifact in files[:FILES_SHOWN]]
    displays = {display.artifact.pk: display for display in artifact_displays(shown, user=user, render_documents=True)}
    return {
        run_id: ([displays[artifact.pk] for artifact in files[:FILES_SHOWN]], len(files))
        for run_id, files in by_run.items()
    }


def _next_look(request: HttpRequest, *, going: bool) -> str:
    looks = request.GET.get("look", "0")
    count = int(looks) if LOOK.fullmatch(looks) else 0
    if not going or count >= MAX_LOOKS:
        return ""
    return f"{request.path}?look={count + 1}"


def _comparison_page(request: HttpRequest, viewing: ComparisonViewing, *, status: int = 200) -> HttpResponse:
    assert isinstance(request.user, User)
    files = _contestant_files(viewing, request.user)
    wins, ties = comparison_tallies(viewing.comparison) if viewing.revealed else ({}, 0)
    columns = []
    for contestant in viewing.contestants:
        displays, count = files.get(contestant.run_id, ([], 0))
        columns.append(
            {
                "contestant": contestant,
                "files": displays,
                "more_files": max(0, count - FILES_SHOWN),
                "votes": wins.get(contestant.pk, 0),
            }
        )
    context = {
        "workspace": viewing.comparison.workspace,
        "membership": viewing.membership,
        "viewing": viewing,
        "comparison": viewing.comparison,
        "columns": columns,
        "ties": ties,
        "next_look_url": _next_look(request, going=not viewing.all_final),
        "may_cancel": not viewing.all_final
        and may_cancel_comparison(
            viewing.membership, created_by_id=viewing.comparison.created_by_id, user=request.user
        ),
    }
    return render(request, "arena/comparison.html", context, status=status)


@login_required
@with_platform_csp
@require_GET
def comparison_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _comparison_page(request, comparison_for_viewer_or_404(pk=pk, user=request.user))


@login_required
@with_platform_csp
@require_POST
def comparison_vote(request: HttpRequest, pk: int) -> HttpResponse:
    """A vote for one contestant (its letter) or a tie; refused ones come back on the page, saying why."""
    assert isinstance(request.user, User)
    viewing = comparison_for_viewer_or_404(pk=pk, user=request.user)
    chosen = request.POST.get("winner", "")
    by_letter = {contestant.letter: contestant for contestant in viewing.contestants}
    if chosen != TIE and chosen not in by_letter:
        messages.error(request, "Choose the best one, or a tie, then vote.")
        return _comparison_page(request, viewing, status=400)
    try:
        vote_cast(comparison=viewing.comparison, user=request.user, winner=by_letter.get(chosen))
    except PermissionDenied as error:
        messages.error(request, str(error))
        return _comparison_page(request, viewing, status=403)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return _comparison_page(request, comparison_for_viewer_or_404(pk=pk, user=request.user), status=400)
    messages.success(request, "Thank you: your vote counts in the workspace's leaderboard.")
    return redirect(viewing.comparison)


@login_required
@with_platform_csp
@require_POST
def comparison_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Cancel every contestant still going; refused ones come back on the page, saying why."""
    assert isinstance(request.user, User)
    viewing = comparison_for_viewer_or_404(pk=pk, user=request.user)
    try:
        stopped = comparison_cancel(comparison=viewing.comparison, user=request.user)
    except PermissionDenied as error:
        messages.error(request, str(error))
        return _comparison_page(request, viewing, status=403)
    if stopped:
        messages.success(request, f"Cancelled: {stopped} run{'s' if stopped != 1 else ''} asked to stop.")
    else:
        messages.info(request, "Every contestant had already ended: there was nothing to cancel.")
    return redirect(viewing.comparison)


@login_required
@require_GET
def workspace_leaderboard_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    context = {
        "workspace": workspace,
        "membership": membership,
        "board": workspace_leaderboard(workspace=workspace),
        "comparisons": comparisons_visible_to(workspace=workspace, user=request.user)[:20],
    }
    return render(request, "arena/leaderboard.html", context)
