"""Writes for comments: write one, edit it, delete it. Who may is asked here (through
creations.comments.access and workspaces.permissions), so the pages and the API get one answer.

A new comment, and an edit that mentions someone new, are announced with `comment_posted`
inside the same transaction: whoever listens (notifications) writes in it too, and nothing is
announced for a comment that was not saved."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from creations.access import creation_visible
from creations.comments.access import CommentViewing, may_comment_on
from creations.comments.mentions import members_mentioned
from creations.comments.models import COMMENT_MAX_CHARS, Comment
from creations.comments.signals import comment_posted
from creations.models import Creation, Run
from workspaces.models import Membership
from workspaces.permissions import COMMENT_REFUSED, DELETE_COMMENT_REFUSED, EDIT_COMMENT_REFUSED
from workspaces.selectors import membership_get


def _checked_text(text: str) -> str:
    # Counted as the page counts it (static/js/char_limits.js): a line end is one character.
    text = (text or "").replace("\r\n", "\n").strip()
    if not text:
        raise ValidationError({"text": "Write something first: the comment is empty."})
    if len(text) > COMMENT_MAX_CHARS:
        too_long = f"The comment is {len(text):,} characters long, over its limit of {COMMENT_MAX_CHARS:,}: shorten it."
        raise ValidationError({"text": too_long})
    return text


def _mentionable(creation: Creation, text: str) -> list[User]:
    """The members the text mentions who may see the creation (a private one: its author only)."""
    members = list(
        Membership.objects.filter(workspace_id=creation.workspace_id, user__is_active=True).select_related("user")
    )
    named = {person.pk for person in members_mentioned(text, [member.user for member in members])}
    return [
        member.user
        for member in members
        if member.user_id in named and creation_visible(creation=creation, user=member.user, membership=member)
    ]


def comment_create(*, creation: Creation, user: User, text: str, run: Run | None = None) -> Comment:
    """`user`'s comment on `creation`, or (with `run`) on that version of it."""
    membership = membership_get(workspace=creation.workspace_id, user=user)
    if not may_comment_on(creation=creation, user=user, membership=membership):
        raise PermissionDenied(COMMENT_REFUSED)
    if run is not None and run.creation_id != creation.pk:
        raise ValidationError({"run": "That version is not one of this creation's."})
    text = _checked_text(text)
    with transaction.atomic():
        comment = Comment.objects.create(
            workspace_id=creation.workspace_id, creation=creation, run=run, author=user, text=text
        )
        mentioned = [person for person in _mentionable(creation, text) if person.pk != user.pk]
        comment.mentioned.set(mentioned)
        comment_posted.send(
            sender=Comment, comment=comment, newly_mentioned={person.pk for person in mentioned}, edited=False
        )
    return comment


def comment_edit(*, viewing: CommentViewing, user: User, text: str) -> Comment:
    """New words for the author's own comment; people it now mentions for the first time are told."""
    if not viewing.may_edit(user):
        raise PermissionDenied(EDIT_COMMENT_REFUSED)
    comment = viewing.comment
    text = _checked_text(text)
    with transaction.atomic():
        before = set(comment.mentioned.values_list("pk", flat=True))
        mentioned = [person for person in _mentionable(comment.creation, text) if person.pk != user.pk]
        comment.text, comment.edited_at = text, timezone.now()
        comment.save(update_fields=["text", "edited_at"])
        comment.mentioned.set(mentioned)
        added = {person.pk for person in mentioned} - before
        if added:
            comment_posted.send(sender=Comment, comment=comment, newly_mentioned=added, edited=True)
    return comment


def comment_delete(*, viewing: CommentViewing, user: User) -> None:
    if not viewing.may_delete(user):
        raise PermissionDenied(DELETE_COMMENT_REFUSED)
    Comment.objects.filter(pk=viewing.comment.pk).delete()
