"""Galleries: a workspace's artifacts (members) and the public one (anyone)."""

from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from creations.artifacts.display import artifact_displays
from creations.web.csp import with_platform_csp
from creations.web.forms import GalleryFilterForm
from creations.web.gallery import gallery_models, gallery_page, gallery_people
from workspaces.models import Workspace
from workspaces.permissions import workspace_membership_or_404


def _gallery(request: HttpRequest, *, workspace: Workspace | None, template_context: dict[str, object]) -> HttpResponse:
    form = GalleryFilterForm(
        request.GET or None, people=gallery_people(workspace=workspace), models=gallery_models(workspace=workspace)
    )
    query = form.query()
    older_than = request.GET.get("older", "")
    page = gallery_page(
        user=request.user, workspace=workspace, query=query, older_than=older_than, size=settings.GALLERY_PAGE_SIZE
    )
    chosen = form.chosen()
    context = {
        **template_context,
        "form": form,
        "query": query,
        "filtered": bool(chosen.keys() - {"sort", "show"}),
        "page": page,
        "is_first_page": not older_than,
        "newest_page_url": f"?{urlencode(chosen)}",
        "next_page_url": f"?{urlencode({**chosen, 'older': page.older})}" if page.older else None,
        "items": artifact_displays(page.items, user=request.user),
    }
    template = "gallery/_grid.html" if request.headers.get("HX-Request") else "gallery/gallery.html"
    return render(request, template, context)


@login_required
@with_platform_csp
@require_GET
def workspace_gallery(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    context = {"workspace": membership.workspace, "membership": membership, "public": False}
    return _gallery(request, workspace=membership.workspace, template_context=context)


@with_platform_csp
@require_GET
def public_gallery(request: HttpRequest) -> HttpResponse:
    return _gallery(request, workspace=None, template_context={"public": True})
