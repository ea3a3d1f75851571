"""Workspace membership checks for views: outsiders get a 404, never a hint."""

from django.contrib.auth.models import AnonymousUser, User
from django.http import Http404
from django.shortcuts import get_object_or_404

from workspaces.models import Membership, Workspace
from workspaces.selectors import membership_get


def workspace_membership_or_404(*, slug: str, user: User | AnonymousUser) -> Membership:
    workspace = get_object_or_404(Workspace, slug=slug)
    membership = membership_get(workspace=workspace, user=user)
    if membership is None:
        raise Http404("No such workspace.")
    return membership
