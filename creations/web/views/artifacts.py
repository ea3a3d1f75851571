"""An artifact's page on the platform (its bytes are served from the artifact origin)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from creations.access import artifact_for_viewer_or_404
from creations.artifacts.display import artifact_displays
from creations.web.csp import with_platform_csp


@with_platform_csp
@require_GET
def artifact_detail(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = artifact_for_viewer_or_404(pk=pk, user=request.user)
    artifact = viewing.artifact
    (display,) = artifact_displays([artifact], user=request.user, render_documents=True)
    context = {
        "display": display,
        "artifact": artifact,
        "creation": artifact.run.creation,
        "workspace": artifact.run.creation.workspace if viewing.is_member else None,
    }
    return render(request, "creations/artifact_detail.html", context)
