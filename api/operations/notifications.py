"""Your notifications: list them, mark one or all read, and choose what you hear of (in the page
and by e-mail, kind by kind). They are the caller's own: another person's do not exist here."""

from django.db.models import QuerySet
from django.http import Http404, HttpRequest
from ninja import Query, Router, Schema
from ninja.pagination import CursorPagination, paginate

from api.auth import WRITE, caller
from api.schemas.notifications import (
    NotificationOut,
    NotificationSettingIn,
    NotificationSettingOut,
    ReadAllOut,
    UnreadCountOut,
)
from creations.notifications.models import Notification
from creations.notifications.selectors import Choice, notification_of, notifications_shown, settings_for, unread_count
from creations.notifications.services import (
    notification_mark_read,
    notification_settings_save,
    notifications_mark_all_read,
)

router = Router(tags=["notifications"])


class NotificationFilter(Schema):
    unread: bool = False


def _settings_out(choices: list[Choice]) -> list[NotificationSettingOut]:
    return [
        NotificationSettingOut(
            kind=choice.kind,  # type: ignore[arg-type]
            label=choice.label,
            in_page=choice.in_page,
            email=choice.email,
            mailed=choice.mailed,
        )
        for choice in choices
    ]


@router.get(
    "",
    response=list[NotificationOut],
    summary="Your notifications",
    description="Newest first, in pages; `unread=true` for the unread ones only (what the bell counts).",
)
@paginate(CursorPagination, ordering=("-id",))
def list_notifications(request: HttpRequest, filters: Query[NotificationFilter]) -> QuerySet[Notification]:
    shown = notifications_shown(caller(request)).select_related("workspace")
    return shown.filter(read_at__isnull=True) if filters.unread else shown


@router.get(
    "/unread-count",
    response=UnreadCountOut,
    summary="How many of your notifications are unread",
    description="The number the bell shows; cheap enough to ask every half minute.",
)
def count_unread_notifications(request: HttpRequest) -> UnreadCountOut:
    return UnreadCountOut(unread=unread_count(caller(request)))


@router.post(
    "/read",
    auth=WRITE,
    response=ReadAllOut,
    summary="Mark all your notifications read",
)
def read_all_notifications(request: HttpRequest) -> ReadAllOut:
    return ReadAllOut(marked_read=notifications_mark_all_read(user=caller(request)))


@router.post(
    "/{notification_id}/read",
    auth=WRITE,
    response=NotificationOut,
    summary="Mark a notification read",
    description="Marking it again changes nothing.",
)
def read_notification(request: HttpRequest, notification_id: int) -> Notification:
    user = caller(request)
    notification = notification_of(pk=notification_id, user=user)
    if notification is None:
        raise Http404("No such notification of yours.")
    return notification_mark_read(notification=notification, user=user)


@router.get(
    "/settings",
    response=list[NotificationSettingOut],
    summary="What you hear of",
    description="Each kind of notification, on or off in the page and by e-mail.",
)
def get_notification_settings(request: HttpRequest) -> list[NotificationSettingOut]:
    return _settings_out(settings_for(caller(request)))


@router.put(
    "/settings",
    auth=WRITE,
    response=list[NotificationSettingOut],
    summary="Choose what you hear of",
    description="The kinds you send are set as you say; the others keep their setting. Answers every kind.",
)
def put_notification_settings(
    request: HttpRequest, payload: list[NotificationSettingIn]
) -> list[NotificationSettingOut]:
    user = caller(request)
    notification_settings_save(
        user=user, choices=[Choice(kind=item.kind, in_page=item.in_page, email=item.email) for item in payload]
    )
    return _settings_out(settings_for(user))
