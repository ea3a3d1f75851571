"""The workspaces the caller belongs to, with their role and this month's quota use."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from api.auth import caller
from api.schemas.workspaces import QuotaUse, WorkspaceOut
from creations.usage.selectors import workspace_month_usage
from workspaces.models import Membership
from workspaces.permissions import workspace_membership_or_404

router = Router(tags=["workspaces"])


def workspace_out(membership: Membership) -> WorkspaceOut:
    workspace = membership.workspace
    usage = workspace_month_usage(workspace=workspace)
    return WorkspaceOut(
        slug=workspace.slug,
        name=workspace.name,
        is_personal=workspace.is_personal,
        role=membership.role,
        quota=QuotaUse(
            month_start=usage.month_start,
            renews_at=usage.renews_at,
            tokens_used=usage.tokens,
            tokens_quota=workspace.quota_month_tokens,
            sandbox_seconds_used=round(usage.sandbox_seconds, 1),
            sandbox_seconds_quota=workspace.quota_month_sandbox_seconds,
            storage_bytes_used=usage.storage_bytes,
            storage_bytes_quota=workspace.quota_storage_bytes,
            concurrent_runs_quota=workspace.quota_concurrent_runs,
        ),
    )


@router.get("", response=list[WorkspaceOut], summary="Workspaces you belong to")
def list_workspaces(request: HttpRequest) -> list[WorkspaceOut]:
    memberships = Membership.objects.filter(user=caller(request)).select_related("workspace")
    return [workspace_out(m) for m in memberships.order_by("-workspace__is_personal", "workspace__name")]


@router.get("/{slug}", response=WorkspaceOut, summary="One workspace")
def get_workspace(request: HttpRequest, slug: str) -> WorkspaceOut:
    return workspace_out(workspace_membership_or_404(slug=slug, user=request.user))
