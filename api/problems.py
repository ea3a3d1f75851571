"""Every error the API answers, in one format: RFC 9457 problem details
(`application/problem+json`), with a `detail` a person can act on and, for bad
input, which field was wrong. Never a stack trace: an unexpected error is
logged here and answered with a plain 500."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse
from ninja import Schema
from ninja.errors import AuthenticationError, HttpError, Throttled
from ninja.errors import ValidationError as RequestValidationError

if TYPE_CHECKING:
    from ninja import NinjaAPI

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/problem+json"
TITLES = {
    400: "Bad request",
    401: "Not signed in",
    403: "Not allowed",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Too large",
    422: "Invalid input",
    429: "Too many requests",
    500: "Server error",
}


class FieldProblem(Schema):
    field: str
    message: str


class Problem(Schema):
    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[FieldProblem] = []


def problem_response(
    request: HttpRequest, api: NinjaAPI, *, status: int, detail: str, errors: list[FieldProblem] | None = None
) -> HttpResponse:
    body = Problem(title=TITLES.get(status, "Error"), status=status, detail=detail, errors=errors or [])
    response = api.create_response(request, body.model_dump(), status=status)
    response["Content-Type"] = MEDIA_TYPE
    return response


def _field_name(location: Any) -> str:
    parts = [str(part) for part in location if part not in ("body", "payload", "query", "path", "form", "file")]
    return ".".join(parts) or "request"


def _from_request_validation(request: HttpRequest, exc: RequestValidationError, api: NinjaAPI) -> HttpResponse:
    errors = [
        FieldProblem(field=_field_name(error.get("loc", ())), message=error.get("msg", "")) for error in exc.errors
    ]
    detail = "; ".join(f"{error.field}: {error.message}" for error in errors[:5]) or "The request is not valid."
    return problem_response(request, api, status=422, detail=detail, errors=errors)


def _from_django_validation(request: HttpRequest, exc: DjangoValidationError, api: NinjaAPI) -> HttpResponse:
    if hasattr(exc, "error_dict"):
        errors = [
            FieldProblem(field="request" if field == "__all__" else field, message=message)
            for field, messages in exc.message_dict.items()
            for message in messages
        ]
    else:
        errors = [FieldProblem(field="request", message=message) for message in exc.messages]
    detail = " ".join(error.message for error in errors) or "The request is not valid."
    return problem_response(request, api, status=422, detail=detail, errors=errors)


def _from_authentication(request: HttpRequest, exc: AuthenticationError, api: NinjaAPI) -> HttpResponse:
    message = str(exc)
    if message in ("", "Unauthorized"):
        message = "Send a personal access token (Authorization: Bearer atl_…) or sign in."
    response = problem_response(request, api, status=401, detail=message)
    response["WWW-Authenticate"] = "Bearer"
    return response


def _from_throttled(request: HttpRequest, exc: Throttled, api: NinjaAPI) -> HttpResponse:
    if str(exc) != "Too many requests.":  # a limit that says itself what to do
        detail = str(exc)
    elif exc.wait:
        detail = (
            f"Too many requests from you (all your tokens count together). Wait {int(exc.wait)} seconds and try again."
        )
    else:
        detail = "Too many requests from you (all your tokens count together). Wait a minute and try again."
    response = problem_response(request, api, status=429, detail=detail)
    if exc.wait:
        response["Retry-After"] = str(max(1, int(exc.wait)))
    return response


def _from_http_error(request: HttpRequest, exc: HttpError, api: NinjaAPI) -> HttpResponse:
    return problem_response(request, api, status=exc.status_code, detail=str(exc))


def _from_not_found(request: HttpRequest, exc: Http404, api: NinjaAPI) -> HttpResponse:
    return problem_response(request, api, status=404, detail=str(exc) or "No such thing, or not yours to see.")


def _from_permission_denied(request: HttpRequest, exc: PermissionDenied, api: NinjaAPI) -> HttpResponse:
    return problem_response(request, api, status=403, detail=str(exc) or "You may not do this.")


def _from_unexpected(request: HttpRequest, exc: Exception, api: NinjaAPI) -> HttpResponse:
    log.error("API %s %s failed", request.method, request.path, exc_info=exc)
    return problem_response(request, api, status=500, detail="Something went wrong on our side; it was logged.")


def install_problem_handlers(api: NinjaAPI) -> None:
    def bound(handler: Any) -> Any:
        return lambda request, exc: handler(request, exc, api)

    # Most specific first is not needed: ninja picks the handler of the nearest class in the MRO.
    api.add_exception_handler(Exception, bound(_from_unexpected))
    api.add_exception_handler(RequestValidationError, bound(_from_request_validation))
    api.add_exception_handler(DjangoValidationError, bound(_from_django_validation))
    api.add_exception_handler(AuthenticationError, bound(_from_authentication))
    api.add_exception_handler(Throttled, bound(_from_throttled))
    api.add_exception_handler(HttpError, bound(_from_http_error))
    api.add_exception_handler(Http404, bound(_from_not_found))
    api.add_exception_handler(PermissionDenied, bound(_from_permission_denied))


@contextmanager
def refusals_as_conflicts(*, applies: Callable[[], bool] = lambda: True) -> Iterator[None]:
    """A service's refusal about the state of what was asked for ("v2 has ended", "v3 is still
    going": a ValidationError naming no field) answered 409 Conflict with the service's sentence;
    while `applies`. Errors that name a field stay bad input (422)."""
    try:
        yield
    except DjangoValidationError as error:
        if hasattr(error, "error_dict") or not applies():
            raise
        raise HttpError(409, " ".join(error.messages)) from error
