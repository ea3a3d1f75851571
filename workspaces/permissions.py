"""Workspace membership checks for views: outsiders get a 404, never a hint."""

from django.contrib.auth.models import AnonymousUser, User
from django.http import Http404

from workspaces.models import Membership


def workspace_membership_or_404(*, slug: str, user: User | AnonymousUser) -> Membership:
    """The user's membership of the workspace with its workspace, in one query."""
    membership = None
    if user.is_authenticated:
        membership = Membership.objects.select_related("workspace").filter(workspace__slug=slug, user=user).first()
    if membership is None:
        raise Http404("No such workspace.")
    return membership
