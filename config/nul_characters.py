"""Requests that name a NUL character in their path or query string are answered 400 at once.

PostgreSQL can neither store nor compare text holding NUL (psycopg refuses such a parameter), so a
view that looked up `/w/<slug>/` or `?workspace=` with one in it would fail with a server error. No
name, slug or search the platform keeps can contain one: refusing them before any view runs answers
every such request, the API's (as a problem document) and the pages', with one clear sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

REFUSAL = "The address holds a NUL character (%00), which no name, slug or search here can contain."


def _names_nul(request: HttpRequest) -> bool:
    query = request.META.get("QUERY_STRING", "")
    return "\x00" in request.path or b"\x00" in unquote_to_bytes(query.replace("+", " "))


class RefuseNulCharactersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not _names_nul(request):
            return self.get_response(request)
        if request.path.startswith("/api/"):
            from api.problems import problem_response
            from api.v1 import api

            return problem_response(request, api, status=400, detail=REFUSAL)
        return HttpResponseBadRequest(REFUSAL, content_type="text/plain; charset=utf-8")
