"""Who is calling: a personal access token (`Authorization: Bearer atl_…`), or the
browser's session.

Token requests carry no session and need no CSRF token: a cross-site page cannot
make the browser send a bearer header. Session requests keep Django's CSRF check
on anything that writes. Write operations take `WRITE`; a read-only token is
refused there with a message saying which token would do. Tokens that were never
made are counted per address, and past a limit none is checked (api/throttling.py).
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja.errors import AuthenticationError, HttpError
from ninja.security import HttpBearer, SessionAuth

from api.models import PersonalAccessToken
from api.throttling import count_unknown_token, refuse_if_guessing
from api.tokens import token_authenticate


class TokenRefused(AuthenticationError):
    """A bearer token that does not work, with why (revoked, expired, unknown)."""

    def __init__(self, message: str) -> None:
        super().__init__(status_code=401, message=message)


class PersonalTokenAuth(HttpBearer):
    def __init__(self, *, write: bool) -> None:
        super().__init__()
        self.write = write

    def authenticate(self, request: HttpRequest, token: str) -> PersonalAccessToken:
        refuse_if_guessing(request)
        check = token_authenticate(token)
        if check.token is None:
            if check.unknown:
                count_unknown_token(request)
            raise TokenRefused(check.refusal)
        if self.write and not check.token.can_write:
            raise HttpError(
                403, "This token can only read. Create a token with the “read and write” scope to make changes."
            )
        request.user = check.token.user
        return check.token


class BrowserSessionAuth(SessionAuth):
    """The signed-in browser (the API's docs page, scripts in the person's own tabs).
    Its writes need Django's CSRF token; a request with no session at all is not
    refused for CSRF but told to authenticate (401)."""

    def __call__(self, request: HttpRequest) -> Any:
        if not request.user.is_authenticated:
            return None
        return super().__call__(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        return request.user if request.user.is_authenticated else None


READ = [PersonalTokenAuth(write=False), BrowserSessionAuth()]
WRITE = [PersonalTokenAuth(write=True), BrowserSessionAuth()]


def calling_token(request: HttpRequest) -> PersonalAccessToken | None:
    auth = getattr(request, "auth", None)
    return auth if isinstance(auth, PersonalAccessToken) else None


def caller(request: HttpRequest) -> User:
    """The person calling; every operation has authenticated them by the time it runs."""
    return cast(User, request.user)
