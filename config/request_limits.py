"""Request bodies larger, or holding more, than the platform takes, and those it cannot read:
answered before any view reads them (config.body_limits judges), in one place: the API with a
problem document, the pages with the platform's 413 or 400 page, a form that asks for it
(`refused_body_page`) by coming back with the reason, the artifact origin in plain text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from config.body_limits import RefusedBodyPage, body_refusal
from config.errors import refused_request_page


class RequestLimitsMiddleware:
    """First among the middleware that read bodies (before the CSRF check)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> HttpResponse | None:
        page: RefusedBodyPage | None = getattr(view, "refused_body_page", None)
        refusal = body_refusal(request, keep_form_text=page is not None)
        if refusal is None:
            return None
        if request.path.startswith("/api/"):
            from api.problems import problem_response
            from api.v1 import api

            return problem_response(request, api, status=refusal.status, detail=refusal.message)
        if getattr(request, "urlconf", None) not in (None, settings.ROOT_URLCONF):
            # Another origin's URLconf (the artifact origin's): its answers link to nothing of the platform.
            return HttpResponse(refusal.message, status=refusal.status, content_type="text/plain; charset=utf-8")
        if page is not None:
            return page(request, refusal, *args, **kwargs)
        return refused_request_page(request, status=refusal.status, message=refusal.message)
