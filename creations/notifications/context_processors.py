from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from creations.notifications.selectors import unread_count


def notifications(request: HttpRequest) -> dict[str, Any]:
    """The signed-in person's unread notifications, for the bell in the page's header: counted
    when a page shows the bell, not for every response; and how often the page asks again."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"unread_notifications": 0}
    return {
        "unread_notifications": SimpleLazyObject(lambda: unread_count(user)),
        "bell_poll_seconds": settings.NOTIFICATION_BELL_POLL_SECONDS,
    }
