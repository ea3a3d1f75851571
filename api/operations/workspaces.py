"""The workspaces the caller belongs to, with their role and this month's quota use."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from api.auth import caller
from api.schemas.workspaces import QuotaUse, WorkspaceOut
from creations.usage.selectors import MonthUsage, workspaces_month_usage
from workspaces.models import Membership
from workspaces.permissions import workspace_membership_or_404
from workspaces.selectors import memberships_of

router = Router(tags=["workspaces"])


def workspace_out(membership: Membership, usage: MonthUsage) -> WorkspaceOut:
    workspace = membership.workspace
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


def workspaces_out(memberships: list[Membership]) -> list[WorkspaceOut]:
    # Every workspace's month in one query, not one each.
    usage = workspaces_month_usage(workspaces=[membership.workspace_id for membership in memberships])
    return [workspace_out(membership, usage[membership.workspace_id]) for membership in memberships]


@router.get("", response=list[WorkspaceOut], summary="Workspaces you belong to")
def list_workspaces(request: HttpRequest) -> list[WorkspaceOut]:
    return workspaces_out(list(memberships_of(user=caller(request))))


@router.get("/{slug}", response=WorkspaceOut, summary="One workspace")
def get_workspace(request: HttpRequest, slug: str) -> WorkspaceOut:
    return workspaces_out([workspace_membership_or_404(slug=slug, user=caller(request))])[0]
