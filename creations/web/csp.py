"""A Content-Security-Policy for the platform's own pages.

Defence in depth behind sanitizing: even if hostile markup slipped into a page,
no inline script would run, and artifacts may only be framed or embedded from
the artifact origin.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from creations.artifacts.presigned import store_source


def platform_csp() -> str:
    artifacts = settings.ARTIFACT_ORIGIN
    # Pictures and media the artifact origin redirects to the S3 store load from there.
    media = f"{artifacts} {store}" if (store := store_source()) else artifacts
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self' 'unsafe-inline'",  # htmx injects its indicator style
            f"img-src 'self' data: {media}",
            f"media-src {media} data:",  # a video's captions, WebVTT the page carries (display.py)
            f"frame-src {artifacts}",
            "connect-src 'self'",  # same-origin fetch and websockets
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def with_platform_csp(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response.headers.setdefault("Content-Security-Policy", platform_csp())
        return response

    return wrapped


class PlatformCSPMiddleware:
    """Give every platform page the CSP (views may set a stricter one first).

    Artifact responses set their own policy, which `setdefault` keeps. The
    admin is left alone: it relies on Django's own inline assets.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith("/admin/"):
            response.headers.setdefault("Content-Security-Policy", platform_csp())
        return response
