"""How many API requests one token (or one signed-in browser) may make a minute.

Counted by django-ratelimit in the shared `ratelimit` cache, as the web's own
limits are (workspaces/rate_limits.py); ninja answers 429 with `Retry-After`,
the seconds until this key's minute ends. With the cache away the request goes
through: a Redis hiccup must not lock every script out.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage
from ninja.errors import Throttled
from ninja.throttling import BaseThrottle

from api.auth import calling_token

log = logging.getLogger(__name__)


def _caller_key(group: str, request: HttpRequest) -> str:
    token = calling_token(request)
    return f"token:{token.pk}" if token is not None else f"user:{request.user.pk}"


class PerCallerRateLimit(BaseThrottle):
    def __init__(self) -> None:
        # ninja asks wait() right after allow_request() on the same thread, with no request:
        # the answer is kept per thread, not on this object every request shares.
        self._last = threading.local()

    def allow_request(self, request: HttpRequest) -> bool:
        self._last.wait = None
        try:
            usage = get_usage(
                request,
                group="api",
                key=_caller_key,
                rate=f"{settings.API_RATE_LIMIT_PER_MINUTE}/m",
                increment=True,
            )
        except Exception as error:  # the shared cache is away: let the request through
            log.warning("API rate limit not counted (%s): request let through", error)
            return True
        if usage is None or not usage["should_limit"]:
            return True
        self._last.wait = max(1, int(usage["time_left"]))
        return False

    def wait(self) -> float | None:
        return getattr(self._last, "wait", None)


class SubmissionsThrottled(Throttled):
    """Past the web's own limit on starting runs (workspaces/rate_limits.py), which the API shares."""

    def __init__(self, message: str) -> None:
        super().__init__(wait=60)
        self.message = message
