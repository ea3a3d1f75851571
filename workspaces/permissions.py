"""Workspace permission checks: who belongs to a workspace, who may start runs in it, and
who may share its work outside it.
Renaming a creation one can see is for those who may work on it: `may_rename_creation`.

Outsiders get a 404, never a hint. Starting runs is one rule wherever it is asked
(submitting, re-running, refining, restoring a version, forking, starting from an
artifact, uploading inputs for a run, talking to a running agent), by the services,
the API and the pages alike: `may_start_runs`. Share links (a creation shown to anyone
with the link) are made by those who may start runs, for what they may see; owners and
admins see and revoke every link of the workspace: `may_share`, `may_manage_share_links`.
"""

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import Http404

from workspaces.models import Membership, Workspace
from workspaces.selectors import membership_get

START_RUNS_REFUSED = "Only owners, admins and members of this workspace can start runs."
RENAME_REFUSED = "Only owners, admins and members of this workspace can rename its creations."
SHARE_REFUSED = "Only owners, admins and members of this workspace can make share links."
REVOKE_SHARE_REFUSED = "You can revoke the share links you made; owners and admins can revoke any."


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


def may_rename_creation(membership: Membership | None) -> bool:
    """Whether a membership lets its person rename the creations of its workspace they can see:
    those who may work on them (refine, restore a version) may; viewers watch."""
    return may_start_runs(membership)


def may_share(membership: Membership | None) -> bool:
    """Whether a membership lets its person make share links (for the creations they may see):
    owners, admins and members; viewers watch and share nothing."""
    return may_start_runs(membership)


def may_manage_share_links(membership: Membership | None) -> bool:
    """Whether a membership sees and revokes every share link of its workspace, whoever made it
    (those of creations private to someone else too): owners and admins."""
    return membership is not None and membership.can_manage


def may_revoke_share_link(membership: Membership | None, *, made_by_id: int | None, user: User | AnonymousUser) -> bool:
    """Owners and admins revoke any link of their workspace; the others who may share, their own."""
    if may_manage_share_links(membership):
        return True
    return may_share(membership) and made_by_id is not None and made_by_id == user.pk
