"""Reads for workspaces: who belongs where, with which role."""

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from workspaces.models import Membership, Workspace


def workspaces_for_user(*, user: User | AnonymousUser) -> QuerySet[Workspace]:
    if not user.is_authenticated:
        return Workspace.objects.none()
    return Workspace.objects.filter(memberships__user=user).order_by("-is_personal", "name")


def membership_get(*, workspace: Workspace | int, user: User | AnonymousUser) -> Membership | None:
    """The user's membership in the workspace, or None for outsiders and anonymous users."""
    if not user.is_authenticated:
        return None
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    return Membership.objects.filter(workspace_id=workspace_id, user=user).select_related("workspace").first()
