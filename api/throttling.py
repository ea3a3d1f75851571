"""How many API requests one person may make a minute, and how many tokens that were never
made one address may try.

Counted by django-ratelimit in the shared `ratelimit` cache, as the web's own
limits are (workspaces/rate_limits.py); ninja answers 429 with `Retry-After`,
the seconds until the count's minute ends. With the cache away the request goes
through: a Redis hiccup must not lock every script out.

Requests count per person, not per token: ten tokens do not make ten times the
rate. Unknown tokens count per client address (config/client_address.py); past
the limit no token from that address is checked until the minute ends, so a
guess that happens to be right is refused like the others.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage
from ninja.errors import Throttled
from ninja.throttling import BaseThrottle

log = logging.getLogger(__name__)

INVALID_TOKENS_GROUP = "api-invalid-tokens"


def _person_key(group: str, request: HttpRequest) -> str:
    return f"user:{request.user.pk}"


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
                key=_person_key,
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


class InvalidTokensThrottled(Throttled):
    def __init__(self, wait: int) -> None:
        super().__init__(wait=wait)
        self.message = (
            "Too many tokens that do not exist were sent from your network in the last minute; none is checked"
            f" for {wait} seconds. Check the token your script sends, or make one on your Access tokens page."
        )


def _invalid_tokens(request: HttpRequest, *, increment: bool) -> dict[str, Any] | None:
    try:
        return get_usage(
            request,
            group=INVALID_TOKENS_GROUP,
            key="ip",
            rate=f"{settings.API_INVALID_TOKENS_PER_ADDRESS_PER_MINUTE}/m",
            increment=increment,
        )
    except Exception as error:  # the shared cache is away: not counted, nobody locked out
        log.warning("Invalid API tokens not counted (%s)", error)
        return None


def refuse_if_guessing(request: HttpRequest) -> None:
    """InvalidTokensThrottled while this address has used up its unknown tokens for the minute."""
    usage = _invalid_tokens(request, increment=False)
    if usage is not None and usage["count"] >= usage["limit"]:
        raise InvalidTokensThrottled(wait=max(1, int(usage["time_left"])))


def count_unknown_token(request: HttpRequest) -> None:
    _invalid_tokens(request, increment=True)
