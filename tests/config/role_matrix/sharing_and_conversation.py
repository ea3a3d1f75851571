"""The browser's role matrix's rows for sharing a creation (the share dialog, the workspace's links,
and what a link shows to anyone who has it) and for the conversation around it: comments,
following it, and each person's notifications."""

from __future__ import annotations

from creations.comments.models import Comment
from creations.notifications.models import Follow, Notification, NotificationSetting
from creations.sharing.models import ShareLink
from tests.config.role_matrix.rows import GET, POST, POST_ONLY, Row
from tests.support.role_outcomes import (
    FORBIDDEN,
    LISTED,
    LOGIN,
    NOT_FOUND,
    OK,
    UNLISTED,
    Outcome,
    Rule,
    anyone,
    done,
    redirect,
    refused,
    signed_in,
)
from tests.support.role_world import ANONYMOUS, CREATORS, MANAGERS, MEMBER, MEMBERS, OUTSIDER, OWNER, sees


def _share_dialog(outcome: Outcome) -> Rule:
    """A creation's share dialog: for those who see it and may share in its workspace; the others
    who see it (viewers, outsiders of a public one) are told who may."""

    def rule(who: str, visibility: str) -> Outcome:
        if who == ANONYMOUS:
            return LOGIN
        if not sees(who, visibility):
            return NOT_FOUND
        return outcome if who in CREATORS else refused(403)

    return rule


def _share_links_list(who: str, visibility: str) -> Outcome:
    """Owners and admins see every link of the workspace (the world's, by its author, names the
    creation); the other members their own."""
    if who == ANONYMOUS:
        return LOGIN
    if who == OUTSIDER:
        return NOT_FOUND
    return LISTED if who in MANAGERS else UNLISTED


def _revoke_share_link(who: str, visibility: str) -> Outcome:
    """The author's link: owners and admins may revoke it (a private creation's too); the other members
    who see the creation are refused; to anyone else it does not exist."""
    if who == ANONYMOUS:
        return LOGIN
    if who in MANAGERS:
        return done(to="workspace_share_links")
    return FORBIDDEN if who in MEMBERS and sees(who, visibility) else NOT_FOUND


def _follow(who: str, visibility: str) -> Outcome:
    """Every member who sees the creation may follow it; an outsider who sees a public one is told
    they may not (it is not their workspace)."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return done(to="creation_detail") if who in MEMBERS else refused(302, to="creation_detail")


def _comment(who: str, visibility: str) -> Outcome:
    """Those who see the creation and may start runs in its workspace comment; viewers (the world's
    workspace does not let them) and outsiders of a public creation are told who may."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return done(to="creation_detail") if who in CREATORS else refused(403)


def _conversation(who: str, visibility: str) -> bool:
    """Who reads the creation's comments: its workspace's members who see it."""
    return who in MEMBERS and sees(who, visibility)


def _edit_comment(outcome: Outcome) -> Rule:
    """The member's comment: they edit it; the other readers are told only its author may."""

    def rule(who: str, visibility: str) -> Outcome:
        if who == ANONYMOUS:
            return LOGIN
        if not _conversation(who, visibility):
            return NOT_FOUND
        return outcome if who == MEMBER else FORBIDDEN

    return rule


def _delete_comment(who: str, visibility: str) -> Outcome:
    """Its author and the owners and admins delete it; a viewer is sent back saying who may."""
    if who == ANONYMOUS:
        return LOGIN
    if not _conversation(who, visibility):
        return NOT_FOUND
    return done(to="creation_detail") if who in MANAGERS | {MEMBER} else refused(302, to="creation_detail")


def _read_notification(who: str, visibility: str) -> Outcome:
    """The owner's notification: only they may mark it read; to anyone else it does not exist."""
    if who == ANONYMOUS:
        return LOGIN
    return done(to="notifications") if who == OWNER else NOT_FOUND


def _read_all(who: str, visibility: str) -> Outcome:
    if who == ANONYMOUS:
        return LOGIN
    return done(to="notifications") if who == OWNER else redirect("notifications")


ROWS = [
    # Share links: the dialog and lists on the platform; what the link shows on the artifact origin,
    # to anyone who has it, whoever they are (the world's link was made by the creation's author).
    Row(
        "creation_share",
        {GET: _share_dialog(OK), POST: _share_dialog(done(200))},  # POST: make a link, shown on the page
        data={"version": "shown"},
        changed=lambda w, actor: ShareLink.objects.filter(created_by=actor).exists(),
        per_creation=True,
    ),
    Row("workspace_share_links", {GET: _share_links_list}),
    Row(
        "share_link_revoke",
        {GET: POST_ONLY, POST: _revoke_share_link},
        changed=lambda w, actor: ShareLink.objects.filter(pk=w.share_link.pk, revoked_at__isnull=False).exists(),
        per_creation=True,
    ),
    # Comments under a creation, following it, and each person's own notifications.
    Row(
        "creation_comment",
        {GET: POST_ONLY, POST: _comment},
        data={"text": "Nice colours"},
        changed=lambda w, actor: Comment.objects.filter(text="Nice colours").exists(),
        per_creation=True,
    ),
    Row(
        "comment_edit",
        {GET: _edit_comment(OK), POST: _edit_comment(done(to="creation_detail"))},
        data={"text": "Edited words"},
        changed=lambda w, actor: Comment.objects.filter(pk=w.comment.pk, text="Edited words").exists(),
        per_creation=True,
    ),
    Row(
        "comment_delete",
        {GET: POST_ONLY, POST: _delete_comment},
        changed=lambda w, actor: not Comment.objects.filter(pk=w.comment.pk).exists(),
        per_creation=True,
    ),
    Row(
        "creation_follow",
        {GET: POST_ONLY, POST: _follow},
        data={"following": "1"},
        changed=lambda w, actor: Follow.objects.filter(user=actor, creation=w.creation).exists(),
        per_creation=True,
    ),
    Row("notifications", {GET: signed_in(OK)}),
    Row(
        "notification_read",
        {GET: POST_ONLY, POST: _read_notification},
        changed=lambda w, actor: Notification.objects.filter(pk=w.notification.pk, read_at__isnull=False).exists(),
    ),
    Row(
        "notifications_read_all",
        # The owner has the world's unread notification; the others have nothing to mark.
        {GET: POST_ONLY, POST: _read_all},
        changed=lambda w, actor: Notification.objects.filter(recipient=actor, read_at__isnull=False).exists(),
    ),
    Row(
        "notification_settings",
        {GET: signed_in(OK), POST: signed_in(done(to="notification_settings"))},
        data={"run_succeeded_in_page": "on"},
        changed=lambda w, actor: NotificationSetting.objects.filter(user=actor, kind="run_succeeded").exists(),
    ),
    Row("share_page", {GET: anyone(OK)}, per_creation=True),
    Row("share_embed", {GET: anyone(OK)}, per_creation=True),
    Row("share_file", {GET: anyone(OK)}, per_creation=True),
    # Asked without the URL to embed, which is all a row can send: told to name one (tests/creations/sharing).
    Row("share_oembed", {GET: anyone(Outcome(400))}),
]
