"""Reads for comments: a creation's conversation, oldest first, as its reader sees it."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.utils.safestring import SafeString

from creations.comments.mentions import text_as_html
from creations.comments.models import Comment
from creations.models import Creation
from workspaces.models import Membership
from workspaces.permissions import may_delete_comment, may_edit_comment


def comments_of_creation(creation: Creation | int) -> QuerySet[Comment]:
    creation_id = creation if isinstance(creation, int) else creation.pk
    return (
        Comment.objects.filter(creation_id=creation_id)
        .select_related("author", "run")
        .prefetch_related("mentioned")
        .order_by("created_at", "pk")
    )


@dataclass(frozen=True)
class ShownComment:
    comment: Comment
    html: SafeString
    may_edit: bool
    may_delete: bool


def comments_shown(
    *, creation: Creation, user: User | AnonymousUser, membership: Membership
) -> list[ShownComment]:
    """The creation's comments with their text as HTML and what this member may do with each."""
    return [
        ShownComment(
            comment=comment,
            html=comment_html(comment),
            may_edit=may_edit_comment(
                membership, workspace=membership.workspace, author_id=comment.author_id, user=user
            ),
            may_delete=may_delete_comment(membership, author_id=comment.author_id, user=user),
        )
        for comment in comments_of_creation(creation)
    ]


def comment_html(comment: Comment) -> SafeString:
    return text_as_html(comment.text, [person.get_username() for person in comment.mentioned.all()])
