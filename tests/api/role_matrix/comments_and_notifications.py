"""The API role matrix's rows for the conversation around a creation: its comments, following it,
and each person's notifications and their settings."""

from __future__ import annotations

from creations.comments.models import Comment
from creations.notifications.models import Follow, Notification, NotificationSetting
from tests.api.role_matrix.rows import (
    DELETE,
    FORBIDDEN,
    GET,
    NOT_FOUND,
    PATCH,
    POST,
    PUT,
    UNAUTHORIZED,
    Answer,
    Row,
    Rule,
    run_page,
    signed_in,
)
from tests.support.role_world import ANONYMOUS, COMMENT_TEXT, CREATORS, MANAGERS, MEMBER, MEMBERS, OWNER, World, sees


def comments_of_run(who: str, visibility: str) -> Answer:
    """The workspace's members who see the creation read its comments; an outsider of a public one gets none."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200, listed=who in MEMBERS) if sees(who, visibility) else NOT_FOUND


def comment_on_run(who: str, visibility: str) -> Answer:
    """Those who see the creation and may start runs in its workspace comment; viewers (their workspace
    does not allow it) and outsiders of a public creation are refused."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(201, changed=True) if who in CREATORS else FORBIDDEN


def _reads_comments(who: str, visibility: str) -> bool:
    return who in MEMBERS and sees(who, visibility)


def edit_comment(who: str, visibility: str) -> Answer:
    """The member's comment: they edit it; the others who read it are refused."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not _reads_comments(who, visibility):
        return NOT_FOUND
    return Answer(200, changed=True) if who == MEMBER else FORBIDDEN


def delete_comment(who: str, visibility: str) -> Answer:
    """The member's comment: they, the owners and the admins delete it; a viewer is refused."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not _reads_comments(who, visibility):
        return NOT_FOUND
    return Answer(204, changed=True) if who in MANAGERS | {MEMBER} else FORBIDDEN


def own_notifications(answer_for_owner: Answer, otherwise: Answer) -> Rule:
    """The world's notification is the owner's: they list it and mark it read; to the others it does not exist."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        return answer_for_owner if who == OWNER else otherwise

    return rule


def follow_creation(answer: Answer) -> Rule:
    """Following a creation: for the workspace's members who see it (viewers too: they only listen);
    an outsider who sees a public creation is refused, saying who may."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        if not sees(who, visibility):
            return NOT_FOUND
        return answer if who in MEMBERS else FORBIDDEN

    return rule


def _followed_by_everyone(world: World) -> None:
    for person in world.people.values():
        Follow.objects.get_or_create(user=person, creation=world.creation)


def _followed(world: World) -> bool:
    return Follow.objects.filter(creation=world.creation).exists()


def _unfollowed(world: World) -> bool:
    return Follow.objects.filter(creation=world.creation).count() < len(world.people)


def _more_comments(world: World) -> bool:
    return Comment.objects.exclude(pk=world.comment.pk).exists()


def _edited(world: World) -> bool:
    return Comment.objects.filter(pk=world.comment.pk, edited_at__isnull=False).exists()


def _comment_gone(world: World) -> bool:
    return not Comment.objects.filter(pk=world.comment.pk).exists()


def _notification_read(world: World) -> bool:
    return Notification.objects.filter(pk=world.notification.pk, read_at__isnull=False).exists()


def _settings_saved(world: World) -> bool:
    return NotificationSetting.objects.exists()


ROWS = [
    Row(GET, "/api/v1/runs/{run_id}/follow", run_page, per_creation=True),
    Row(
        PUT,
        "/api/v1/runs/{run_id}/follow",
        follow_creation(Answer(200, changed=True)),
        writes=True,
        per_creation=True,
        changed=_followed,
    ),
    Row(
        DELETE,
        "/api/v1/runs/{run_id}/follow",
        follow_creation(Answer(204, changed=True)),
        writes=True,
        per_creation=True,
        changed=_unfollowed,
        prepare=_followed_by_everyone,
    ),
    Row(GET, "/api/v1/runs/{run_id}/comments", comments_of_run, per_creation=True, mark=lambda w: COMMENT_TEXT),
    Row(
        POST,
        "/api/v1/runs/{run_id}/comments",
        comment_on_run,
        body={"text": "Nice colours"},
        writes=True,
        per_creation=True,
        changed=_more_comments,
    ),
    Row(
        PATCH,
        "/api/v1/comments/{comment_id}",
        edit_comment,
        body={"text": "Edited words"},
        writes=True,
        per_creation=True,
        changed=_edited,
    ),
    Row(DELETE, "/api/v1/comments/{comment_id}", delete_comment, writes=True, per_creation=True, changed=_comment_gone),
    Row(
        GET,
        "/api/v1/notifications",
        own_notifications(Answer(200, listed=True), Answer(200, listed=False)),
        mark=lambda w: "mentioned you",
    ),
    Row(
        POST,
        "/api/v1/notifications/read",
        own_notifications(Answer(200, changed=True), Answer(200)),
        writes=True,
        changed=_notification_read,
    ),
    Row(
        POST,
        "/api/v1/notifications/{notification_id}/read",
        own_notifications(Answer(200, changed=True), NOT_FOUND),
        writes=True,
        changed=_notification_read,
    ),
    Row(
        GET,
        "/api/v1/notifications/unread-count",
        own_notifications(Answer(200, listed=True), Answer(200, listed=False)),
        mark=lambda w: '"unread": 1',
    ),
    Row(GET, "/api/v1/notifications/settings", signed_in(Answer(200))),
    Row(
        PUT,
        "/api/v1/notifications/settings",
        signed_in(Answer(200, changed=True)),
        body=[{"kind": "run_succeeded", "in_page": False, "email": False}],
        writes=True,
        changed=_settings_saved,
    ),
]
