"""The platform's error pages, in its look. Only the platform's URLconf names
these handlers: the artifact origin keeps Django's bare pages, which link to
nothing of the platform (its URLconf has none of the platform's names).

A request refused for what it sent gets the same page whatever DEBUG says
(`InputErrorReporter`): input alone never opens Django's debug page."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import BadRequest, SuspiciousOperation
from django.core.handlers.exception import get_exception_response
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import get_resolver, get_urlconf
from django.views import defaults
from django.views.debug import ExceptionReporter


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return defaults.page_not_found(request, exception, template_name="errors/404.html")


def forbidden(request: HttpRequest, exception: Exception) -> HttpResponse:
    return defaults.permission_denied(request, exception, template_name="errors/403.html")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    # Django's own: the exception's text is never shown (it may name a host, a path, a setting).
    return defaults.bad_request(request, exception, template_name="errors/400.html")


def server_error(request: HttpRequest) -> HttpResponse:
    # Rendered without the request, as Django does: what failed may be the database its context would ask.
    return defaults.server_error(request, template_name="errors/500.html")


def refused_request_page(request: HttpRequest, *, status: int, message: str) -> HttpResponse:
    """A request body refused before any view read it (config.request_limits), on a page with no form of its own."""
    template = "errors/413.html" if status == 413 else "errors/400.html"
    return render(request, template, {"refusal": message}, status=status)


class InputErrorReporter(ExceptionReporter):
    """DEBUG's report of an error, except for a request refused for what it sent (Django's
    SuspiciousOperation and BadRequest: a wrong Host header, a malformed cookie or upload).
    Django answers those with its debug page in DEBUG; they get the page production gives."""

    def _page_for_input(self) -> HttpResponse | None:
        if self.request is None or not isinstance(self.exc_value, SuspiciousOperation | BadRequest):
            return None
        return get_exception_response(self.request, get_resolver(get_urlconf()), 400, self.exc_value)

    def get_traceback_html(self) -> Any:
        page = self._page_for_input()
        return super().get_traceback_html() if page is None else page.content.decode()

    def get_traceback_text(self) -> Any:
        return super().get_traceback_text() if self._page_for_input() is None else "Bad Request (400)"
