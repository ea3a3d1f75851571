"""A workspace's home: what is running, what was made lately, this month's usage."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from creations.web.selectors import dashboard_context
from workspaces.permissions import workspace_membership_or_404
from workspaces.selectors import workspace_endpoints, workspace_member_count


@login_required
@require_GET
def workspace_dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    context = {
        "workspace": workspace,
        "membership": membership,
        "members_count": workspace_member_count(workspace=workspace),
        # Only those who can add one are told to.
        "needs_a_model": membership.can_manage and not workspace_endpoints(workspace=workspace).exists(),
        **dashboard_context(workspace=workspace, user=request.user),
    }
    return render(request, "workspaces/dashboard.html", context)
