"""How often one person, one address, and one account may sign up, log in, ask for a
password reset or submit: a flood from one client must not fill the queue or the accounts
table, guess a password, or fill someone's inbox. And how often one workspace may do what
holds a web thread for seconds ("Test connection").

Counting is django-ratelimit's, in a cache every web process shares (Redis,
the `ratelimit` cache). If that cache cannot be reached the request goes
through and a warning is logged: a Redis hiccup must not lock everyone out.
The address is the client's as config/client_address.py finds it behind the
trusted proxies (django-ratelimit's `RATELIMIT_IP_META_KEY`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage, is_ratelimited

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    """Each count is a django-ratelimit rate ("30/m", "5/h"); None: not counted that way."""

    group: str
    message: str
    per_address: str | None  # per client address
    per_person: str | None = None  # per signed-in person
    per_account: str | None = None  # per account a form names (a username or an email), whoever asks


def signup_limit() -> Limit:
    return Limit(
        group="signup",
        per_address=f"{settings.RATE_LIMIT_SIGNUPS_PER_MINUTE}/m",
        message="Too many sign-ups from your network in the last minute. Wait a minute and try again.",
    )


def submission_limit() -> Limit:
    return Limit(
        group="submission",
        per_person=f"{settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE}/m",
        per_address=f"{settings.RATE_LIMIT_SUBMISSIONS_PER_ADDRESS_PER_MINUTE}/m",
        message="You have started many creations in the last minute. Wait a minute and start this one again:"
        " what you typed is kept.",
    )


def login_limit() -> Limit:
    """Password guesses: logging in, and the password asked again before making an access token."""
    return Limit(
        group="login",
        per_account=f"{settings.RATE_LIMIT_LOGINS_PER_ACCOUNT_PER_HOUR}/h",
        per_address=f"{settings.RATE_LIMIT_LOGINS_PER_ADDRESS_PER_MINUTE}/m",
        message="Too many attempts to log in to this account, or from your network. Wait a while and try again,"
        " or reset your password.",
    )


def password_reset_limit() -> Limit:
    return Limit(
        group="password-reset",
        per_account=f"{settings.RATE_LIMIT_PASSWORD_RESETS_PER_ACCOUNT_PER_HOUR}/h",
        per_address=f"{settings.RATE_LIMIT_PASSWORD_RESETS_PER_ADDRESS_PER_HOUR}/h",
        message="Too many password resets asked for this address, or from your network, in the last hour."
        " Look for the mail already sent, or try again later.",
    )


def sign_up_notice_limit() -> Limit:
    """Mail to the owner of an email someone signs up with again: as often as password resets."""
    return Limit(
        group="sign-up-notice",
        per_account=f"{settings.RATE_LIMIT_PASSWORD_RESETS_PER_ACCOUNT_PER_HOUR}/h",
        per_address=None,
        message="",
    )


def _account_key(account: str) -> Callable[[str, HttpRequest], str]:
    name = account.strip().lower()
    return lambda group, request: f"account:{name}"


def over_limit(request: HttpRequest, limit: Limit, *, account: str = "") -> bool:
    """Count this request; True when it goes past a limit (the caller answers 429)."""
    counts: list[tuple[str | Callable[[str, HttpRequest], str], str]] = []
    if limit.per_person is not None and request.user.is_authenticated:
        counts.append(("user", limit.per_person))
    if limit.per_account is not None and account.strip():
        counts.append((_account_key(account), limit.per_account))
    if limit.per_address is not None:
        counts.append(("ip", limit.per_address))
    try:
        limited = [
            is_ratelimited(request, group=limit.group, key=key, rate=rate, increment=True) for key, rate in counts
        ]
    except Exception as error:  # the shared cache is away: let the request through
        log.warning("Rate limits not checked (%s: %s); letting the request through.", type(error).__name__, error)
        return False
    return any(limited)


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
