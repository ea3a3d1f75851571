"""Reads for workspaces: who belongs where, with which role."""

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.utils import timezone

from workspaces.models import ROLES_THAT_CREATE, Invitation, Membership, ModelEndpoint, Workspace


def workspaces_for_user(*, user: User | AnonymousUser) -> QuerySet[Workspace]:
    if not user.is_authenticated:
        return Workspace.objects.none()
    return Workspace.objects.filter(memberships__user=user).order_by("-is_personal", "name")


def workspaces_where_user_creates(*, user: User | AnonymousUser) -> QuerySet[Workspace]:
    """The user's workspaces where their role may start runs, personal first."""
    if not user.is_authenticated:
        return Workspace.objects.none()
    return Workspace.objects.filter(memberships__user=user, memberships__role__in=ROLES_THAT_CREATE).order_by(
        "-is_personal", "name"
    )


def memberships_of(*, user: User) -> QuerySet[Membership]:
    """The user's memberships with their workspaces, personal first, then by name."""
    return (
        Membership.objects.filter(user=user)
        .select_related("workspace")
        .order_by("-workspace__is_personal", "workspace__name")
    )


def membership_get(*, workspace: Workspace | int, user: User | AnonymousUser) -> Membership | None:
    """The user's membership in the workspace, or None for outsiders and anonymous users."""
    if not user.is_authenticated:
        return None
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    return Membership.objects.filter(workspace_id=workspace_id, user=user).select_related("workspace").first()


def workspace_members(*, workspace: Workspace) -> QuerySet[Membership]:
    return Membership.objects.filter(workspace=workspace).select_related("user").order_by("role", "user__username")


def workspace_open_invitations(*, workspace: Workspace) -> QuerySet[Invitation]:
    """Invitations whose link still works."""
    return Invitation.objects.filter(
        workspace=workspace, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
    ).select_related("created_by")


def workspace_member_count(*, workspace: Workspace) -> int:
    return Membership.objects.filter(workspace=workspace).count()


def workspace_endpoints(*, workspace: Workspace) -> QuerySet[ModelEndpoint]:
    """The workspace's model endpoints, retired ones left out."""
    return ModelEndpoint.objects.filter(workspace=workspace, retired_at__isnull=True).order_by("name")


def workspace_endpoint_get(*, workspace: Workspace, pk: int) -> ModelEndpoint | None:
    return workspace_endpoints(workspace=workspace).filter(pk=pk).select_related("workspace").first()
