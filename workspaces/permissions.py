"""Workspace permission checks: who belongs to a workspace, who may start runs in it, and
who may share its work outside it.
Renaming a creation one can see is for those who may work on it: `may_rename_creation`.

Outsiders get a 404, never a hint. Starting runs is one rule wherever it is asked
(submitting, re-running, refining, restoring a version, forking, starting from an
artifact, uploading inputs for a run, talking to a running agent), by the services,
the API and the pages alike: `may_start_runs`. Share links (a creation shown to anyone
with the link) are made by those who may start runs, for what they may see; owners and
admins see and revoke every link of the workspace: `may_share`, `may_manage_share_links`.
Webhooks (the workspace's receivers, told when its runs end) are set up by owners and admins:
`may_manage_webhooks`. A creation refreshed on a schedule runs as the person who set it, so
setting or clearing one is starting runs: `may_schedule_refreshes`.

Evaluations (a suite of tasks run against the workspace's models) are read by every member,
viewers too; uploading a suite or starting an evaluation starts runs, so it is for those who may
start runs: `may_run_evaluations`. An evaluation is cancelled by the person who started it, or by
owners and admins: `may_cancel_evaluation`.

Comments under a creation are written by those who may start runs, and by viewers when their
workspace allows it; each person edits their own, and owners and admins delete any:
`may_comment`, `may_edit_comment`, `may_delete_comment`.

In the arena, every member sees the workspace's comparisons and leaderboard, and those who may
start runs vote (viewers watch): `may_vote`.
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
WEBHOOKS_REFUSED = "Only owners and admins of this workspace can see and change its webhooks."
SCHEDULE_REFUSED = "Only owners, admins and members of this workspace can set or clear a schedule."
COMMENT_REFUSED = (
    "Only owners, admins and members of this workspace can comment here (viewers too, if its settings allow)."
)
EDIT_COMMENT_REFUSED = "You can edit only the comments you wrote."
EVALUATE_REFUSED = "Only owners, admins and members of this workspace can upload suites and start evaluations."
CANCEL_EVALUATION_REFUSED = "You can cancel the evaluations you started; owners and admins can cancel any."
DELETE_SUITE_REFUSED = "You can delete the suites you uploaded; owners and admins can delete any."
DELETE_COMMENT_REFUSED = "You can delete the comments you wrote; owners and admins can delete any."
CANCEL_COMPARISON_REFUSED = "You can cancel the comparisons you made; owners and admins can cancel any."
VOTE_REFUSED = "Only owners, admins and members of this workspace can vote; viewers see the comparisons and the votes."


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


def may_manage_webhooks(membership: Membership | None) -> bool:
    """Whether a membership lets its person see, add, change and test the workspace's webhooks
    (their deliveries name every workspace-visible creation's runs): owners and admins."""
    return membership is not None and membership.can_manage


def may_schedule_refreshes(membership: Membership | None) -> bool:
    """Whether a membership lets its person set or clear a creation's schedule (for a creation
    they may see): each refresh is a run started in their name, so those who may start runs."""
    return may_start_runs(membership)


def may_comment(membership: Membership | None, *, workspace: Workspace) -> bool:
    """Whether a membership of `workspace` lets its person comment on the creations they see:
    owners, admins and members; viewers when the workspace's `viewers_may_comment` is on."""
    if membership is None:
        return False
    return may_start_runs(membership) or workspace.viewers_may_comment


def may_edit_comment(
    membership: Membership | None, *, workspace: Workspace, author_id: int | None, user: User | AnonymousUser
) -> bool:
    """Authors edit their own comments while they may still comment; nobody edits another's words."""
    return may_comment(membership, workspace=workspace) and author_id is not None and author_id == user.pk


def may_delete_comment(membership: Membership | None, *, author_id: int | None, user: User | AnonymousUser) -> bool:
    """Authors delete their own comments while they belong to the workspace; owners and admins any."""
    if membership is None:
        return False
    return membership.can_manage or (author_id is not None and author_id == user.pk)


def may_run_evaluations(membership: Membership | None) -> bool:
    """Whether a membership lets its person upload suites and start evaluations: each sandbox task
    is a run in their name, so those who may start runs."""
    return may_start_runs(membership)


def may_cancel_evaluation(
    membership: Membership | None, *, started_by_id: int | None, user: User | AnonymousUser
) -> bool:
    """The person who started it, while they may still start runs; owners and admins any."""
    if not may_run_evaluations(membership):
        return False
    assert membership is not None
    return membership.can_manage or (started_by_id is not None and started_by_id == user.pk)


def may_delete_suite(membership: Membership | None, *, uploaded_by_id: int | None, user: User | AnonymousUser) -> bool:
    """The person who uploaded it, while they may still upload suites; owners and admins any."""
    if not may_run_evaluations(membership):
        return False
    assert membership is not None
    return membership.can_manage or (uploaded_by_id is not None and uploaded_by_id == user.pk)


def may_vote(membership: Membership | None) -> bool:
    """Whether a membership lets its person vote in the workspace's comparisons: those who may
    start runs (and so make comparisons); viewers see them and the leaderboard."""
    return may_start_runs(membership)


def may_cancel_comparison(
    membership: Membership | None, *, created_by_id: int | None, user: User | AnonymousUser
) -> bool:
    """The person who made the comparison, while they may still start runs; owners and admins any."""
    if not may_start_runs(membership):
        return False
    assert membership is not None
    return membership.can_manage or (created_by_id is not None and created_by_id == user.pk)
