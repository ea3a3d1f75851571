"""The artifact origin: a separate origin that serves artifacts and nothing else.

Artifacts are written by a model that may have been prompt-injected, so they
never share an origin (or cookies) with the platform: in production another host
name, in development another port of it. Requests for the artifact origin are
routed to `creations.origin_urls` (artifact routes, and what share links show);
every other request uses the platform's URLconf, which has no artifact route.
Artifact URLs carry a signed, expiring token naming the run and the viewer.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core import signing
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse
from django.http.request import split_domain_port

ARTIFACT_URLCONF = "creations.origin_urls"
_SALT = "atelier.artifact-url"
_DERIVED_SALT = "atelier.derived-url"
# Pictures the platform makes from a run's files in a sandbox (a comparison's overlay) are kept under
# this prefix, and are served like the files themselves: from this origin, to those who see the run.
DERIVED_PREFIX = "derived/"


def is_artifact_request(request: HttpRequest) -> bool:
    """Is this request for the artifact origin? Its host name says so; when the platform has
    the same host name (development: localhost:8000 and localhost:8001), the port does."""
    try:
        name, port = split_domain_port(request.get_host())
    except DisallowedHost:
        return False
    artifacts = urlsplit(settings.ARTIFACT_ORIGIN)
    if name.strip("[]") != (artifacts.hostname or ""):
        return False
    if artifacts.hostname != urlsplit(settings.SITE_URL).hostname:
        return True
    return _port(port, request.scheme or "http") == _port(str(artifacts.port or ""), artifacts.scheme)


def _port(port: str, scheme: str) -> str:
    """A Host header's port, or the default port of the scheme when it names none."""
    return port or ("443" if scheme == "https" else "80")


class ArtifactOriginMiddleware:
    """Route artifact-host requests to the artifact URLconf; never let a cookie out there."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_artifact_request(request):
            return self.get_response(request)
        request.urlconf = ARTIFACT_URLCONF
        response = self.get_response(request)
        # Whatever ran inside (sessions, CSRF), the artifact origin sets no cookie.
        response.cookies.clear()
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response


@dataclass(frozen=True)
class ArtifactGrant:
    """What a valid token allows: the files of one run, for one viewer (0 = anonymous)."""

    run_id: int
    user_id: int


def grant_sign(*, run_id: int, user: User | AnonymousUser) -> str:
    user_id = user.pk if user.is_authenticated else 0
    return signing.TimestampSigner(salt=_SALT).sign_object({"r": run_id, "u": user_id}, compress=True)


def grant_unsign(token: str) -> ArtifactGrant | None:
    """The grant a token carries, or None when it is forged, malformed or expired."""
    try:
        data: Any = signing.TimestampSigner(salt=_SALT).unsign_object(token, max_age=settings.ARTIFACT_URL_MAX_AGE)
        return ArtifactGrant(run_id=int(data["r"]), user_id=int(data["u"]))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class DerivedGrant:
    """What a valid link to a derived picture allows: that stored file, for one viewer of one run."""

    run_id: int
    user_id: int
    name: str


def derived_sign(*, run_id: int, user: User | AnonymousUser, name: str) -> str:
    user_id = user.pk if user.is_authenticated else 0
    return signing.TimestampSigner(salt=_DERIVED_SALT).sign_object(
        {"r": run_id, "u": user_id, "n": name}, compress=True
    )


def derived_unsign(token: str) -> DerivedGrant | None:
    """The grant a derived picture's token carries, or None when it is forged, malformed, expired or
    names a file outside DERIVED_PREFIX."""
    try:
        data: Any = signing.TimestampSigner(salt=_DERIVED_SALT).unsign_object(
            token, max_age=settings.ARTIFACT_URL_MAX_AGE
        )
        grant = DerivedGrant(run_id=int(data["r"]), user_id=int(data["u"]), name=str(data["n"]))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None
    if not grant.name.startswith(DERIVED_PREFIX) or ".." in grant.name or not grant.name.endswith(".png"):
        return None
    return grant
