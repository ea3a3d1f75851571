"""How often one person, and one address, may sign up or submit: a flood from
one client must not fill the queue or the accounts table. And how often one
workspace may do what holds a web thread for seconds ("Test connection").

Counting is django-ratelimit's, in a cache every web process shares (Redis,
the `ratelimit` cache). If that cache cannot be reached the request goes
through and a warning is logged: a Redis hiccup must not lock everyone out.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage, is_ratelimited

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    group: str
    per_person: int | None  # per signed-in person and minute; None: not counted per person
    per_address: int  # per client address and minute
    message: str


def signup_limit() -> Limit:
    return Limit(
        group="signup",
        per_person=None,
        per_address=settings.RATE_LIMIT_SIGNUPS_PER_MINUTE,
        message="Too many sign-ups from your network in the last minute. Wait a minute and try again.",
    )


def submission_limit() -> Limit:
    return Limit(
        group="submission",
        per_person=settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE,
        per_address=settings.RATE_LIMIT_SUBMISSIONS_PER_ADDRESS_PER_MINUTE,
        message="You have started many creations in the last minute. Wait a minute and start this one again:"
        " what you typed is kept.",
    )


def over_limit(request: HttpRequest, limit: Limit) -> bool:
    """Count this request; True when it goes past a limit (the caller answers 429)."""
    try:
        limited = False
        if limit.per_person is not None and request.user.is_authenticated:
            limited = is_ratelimited(
                request, group=limit.group, key="user", rate=f"{limit.per_person}/m", increment=True
            )
        limited = (
            is_ratelimited(request, group=limit.group, key="ip", rate=f"{limit.per_address}/m", increment=True)
            or limited
        )
    except Exception as error:  # the shared cache is away: let the request through
        log.warning("Rate limits not checked (%s: %s); letting the request through.", type(error).__name__, error)
        return False
    return limited


def workspace_over_limit(*, group: str, workspace_id: int, per_minute: int) -> bool:
    """Count one more for the workspace, whoever asks; True when it goes past `per_minute`."""
    try:
        usage = get_usage(
            None,
            group=group,
            key=lambda _group, _request: f"workspace:{workspace_id}",
            rate=f"{per_minute}/m",
            increment=True,
        )
    except Exception as error:  # the shared cache is away: let it through
        log.warning("Rate limits not checked (%s: %s); letting the request through.", type(error).__name__, error)
        return False
    return usage is not None and bool(usage["should_limit"])
