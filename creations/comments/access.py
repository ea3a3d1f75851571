"""Which comments a person may read and act on. The roles' rules are workspaces.permissions';
what a person may see of a creation is creations.access'.

Comments are the workspace's conversation: its members read them on the creations they see;
a public creation shows its files to everyone, never its comments."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.http import Http404

from creations.access import creation_visible
from creations.comments.models import Comment
from creations.models import Creation
from workspaces.models import Membership
from workspaces.permissions import may_comment, may_delete_comment, may_edit_comment
from workspaces.selectors import membership_get

AnyUser = User | AnonymousUser


def may_read_comments(*, creation: Creation, user: AnyUser, membership: Membership | None) -> bool:
    return membership is not None and creation_visible(creation=creation, user=user, membership=membership)


def may_comment_on(*, creation: Creation, user: AnyUser, membership: Membership | None) -> bool:
    return (
        may_read_comments(creation=creation, user=user, membership=membership)
        and membership is not None
        and may_comment(membership, workspace=membership.workspace)
    )


@dataclass(frozen=True)
class CommentViewing:
    """A comment its reader may see, with their membership of its workspace."""

    comment: Comment
    membership: Membership

    def may_edit(self, user: AnyUser) -> bool:
        return may_edit_comment(
            self.membership, workspace=self.membership.workspace, author_id=self.comment.author_id, user=user
        )

    def may_delete(self, user: AnyUser) -> bool:
        return may_delete_comment(self.membership, author_id=self.comment.author_id, user=user)


def comment_for_reader_or_404(*, pk: int, user: AnyUser) -> CommentViewing:
    """A comment on a creation the person sees in a workspace they belong to; to anyone else it
    does not exist. Whether they may edit or delete it is asked of the viewing."""
    comment = Comment.objects.select_related("creation", "run", "author").filter(pk=pk).first()
    membership = membership_get(workspace=comment.workspace_id, user=user) if comment is not None else None
    if comment is None or membership is None:
        raise Http404("No such comment.")
    if not may_read_comments(creation=comment.creation, user=user, membership=membership):
        raise Http404("No such comment.")
    return CommentViewing(comment=comment, membership=membership)
