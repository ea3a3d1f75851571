"""An artifact's page on the platform (its bytes are served from the artifact origin), and
"Use in a new creation", which takes it to a new-creation form."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from creations.access import artifact_for_viewer_or_404
from creations.artifacts.display import artifact_displays
from creations.page_views import count_creation_view
from creations.web.attachments import creation_new_url
from creations.web.csp import with_platform_csp
from workspaces.selectors import workspaces_where_user_creates


@with_platform_csp
@require_GET
def artifact_detail(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = artifact_for_viewer_or_404(pk=pk, user=request.user)
    artifact = viewing.artifact
    count_creation_view(creation=artifact.run.creation, viewer=request.user)
    (display,) = artifact_displays([artifact], user=request.user, render_documents=True)
    context = {
        "display": display,
        "artifact": artifact,
        "creation": artifact.run.creation,
        "workspace": artifact.run.creation.workspace if viewing.is_member else None,
    }
    return render(request, "creations/artifact_detail.html", context)


@login_required
@require_GET
def artifact_use(request: HttpRequest, pk: int) -> HttpResponse:
    """To the new-creation form with this artifact attached: in the artifact's own workspace
    when the person may start runs there, else in their first workspace where they may (the
    form lists the others). Only a link: the run service checks again when the form is sent."""
    artifact = artifact_for_viewer_or_404(pk=pk, user=request.user).artifact
    workspaces = list(workspaces_where_user_creates(user=request.user))
    target = next((w for w in workspaces if w.pk == artifact.workspace_id), workspaces[0] if workspaces else None)
    if target is None:
        messages.error(request, "You cannot start creations in any workspace yet: make one, or ask to join one.")
        return redirect("artifact_detail", pk=pk)
    return redirect(creation_new_url(target, [artifact.pk]))
