"""Workspace permission checks: who belongs to a workspace, and who may start runs in it.

Outsiders get a 404, never a hint. Starting runs is one rule wherever it is asked
(submitting, re-running, refining, restoring a version, forking, starting from an
artifact, uploading inputs for a run, talking to a running agent), by the services,
the API and the pages alike: `may_start_runs`.
"""

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import Http404

from workspaces.models import Membership, Workspace
from workspaces.selectors import membership_get

START_RUNS_REFUSED = "Only owners, admins and members of this workspace can start runs."


def workspace_membership_or_404(*, slug: str, user: User | AnonymousUser) -> Membership:
    """The user's membership of the workspace with its workspace, in one query."""
    membership = None
    if user.is_authenticated:
        membership = Membership.objects.select_related("workspace").filter(workspace__slug=slug, user=user).first()
    if membership is None:
        raise Http404("No such workspace.")
    return membership


def may_start_runs(membership: Membership | None) -> bool:
    """Whether a membership lets its person start runs in its workspace: owners, admins and
    members may, viewers watch, and outsiders (None) may not. The same rule as a query:
    `workspaces.selectors.workspaces_where_user_creates`."""
    return membership is not None and membership.can_create


def membership_to_start_runs(*, workspace: Workspace | int, user: User | AnonymousUser) -> Membership:
    """The user's membership of `workspace` when it `may_start_runs`; PermissionDenied saying
    who may, otherwise."""
    membership = membership_get(workspace=workspace, user=user)
    if membership is None or not may_start_runs(membership):
        raise PermissionDenied(START_RUNS_REFUSED)
    return membership
