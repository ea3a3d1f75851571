"""Whether a request body can be taken: read it as its view will, or say which limit it is over
(413), or that it cannot be read (400), in a sentence a person can act on.

Django reads a body when something first asks for it (the CSRF check, a form, the API's
parser) and past its limits (DATA_UPLOAD_MAX_MEMORY_SIZE of form text or JSON,
DATA_UPLOAD_MAX_NUMBER_FIELDS, DATA_UPLOAD_MAX_NUMBER_FILES) raises right there: a 400 that
says nothing, in DEBUG its debug page, inside the API a 500. config.request_limits asks here
first, before any view, and answers.

A body over REQUEST_BODY_MAX_BYTES is refused without parsing it, except for a form that comes
back when refused (`refused_body_page`): its files are read past and thrown away, so the text
typed beside them comes back with the form.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.template.defaultfilters import filesizeformat

FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


@dataclass(frozen=True)
class BodyRefusal:
    status: int  # 413 for too much, 400 for what cannot be read
    message: str  # what was refused and which limit, in a sentence or two
    text_kept: bool = False  # the form's text fields were read (request.POST holds them)
    file_names: tuple[str, ...] = ()  # the files read past and thrown away, as the browser named them

    def __str__(self) -> str:
        return self.message


RefusedBodyPage = Callable[..., HttpResponse]  # (request, refusal, *view_args, **view_kwargs)
View = TypeVar("View", bound=Callable[..., HttpResponse])


def refused_body_page(page: RefusedBodyPage) -> Callable[[View], View]:
    """Mark a view whose form should come back when its request body is refused: `page(request,
    refusal, *args, **kwargs)` answers instead of the view (which never runs, so it writes
    nothing). It is called for someone not yet checked in any way: it checks who may see what it
    shows, as the view would. Put it outermost, above the view's other decorators."""

    def mark(view: View) -> View:
        view.refused_body_page = page  # type: ignore[attr-defined]
        return view

    return mark


class DiscardUploads(FileUploadHandler):
    """Reads past every file of a body already refused, keeping none of it, and notes its name."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.file_names: list[str] = []

    def new_file(self, field_name: str, file_name: str, *args: Any, **kwargs: Any) -> None:
        super().new_file(field_name, file_name, *args, **kwargs)
        self.file_names.append(file_name)

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        return None

    def file_complete(self, file_size: int) -> None:
        return None


def body_refusal(request: HttpRequest, *, keep_form_text: bool = False) -> BodyRefusal | None:
    """Read the body as its view will (a form, or the bytes of anything else), or say why it is refused."""
    length = _content_length(request)
    limit = settings.REQUEST_BODY_MAX_BYTES
    if length > limit:
        message = (
            f"What was sent is {filesizeformat(length)}, more than the {filesizeformat(limit)} one request may "
            f"carry. Files go at most {settings.RUN_INPUT_MAX_FILES} at a time, "
            f"{filesizeformat(settings.UPLOAD_MAX_FILE_BYTES)} each and "
            f"{filesizeformat(settings.RUN_INPUT_MAX_BYTES)} together."
        )
        if keep_form_text and _is_form(request):
            return _with_form_text(request, message)
        return BodyRefusal(413, message)
    try:
        if _is_form(request):
            request.POST  # noqa: B018 - parsed now (files too), before any view asks
        elif length and not (request.content_type or "").startswith("multipart/"):
            request.body  # noqa: B018 - read now: JSON and the like, held in memory
    except (SuspiciousOperation, MultiPartParserError, BadRequest) as error:
        _forget_body(request)
        return BodyRefusal(*_said(error))
    return None


def _with_form_text(request: HttpRequest, message: str) -> BodyRefusal:
    discard = DiscardUploads(request)
    request.upload_handlers = [discard]
    try:
        request.POST  # noqa: B018 - the text fields; the files are read past
    except (SuspiciousOperation, MultiPartParserError, BadRequest):
        _forget_body(request)
        return BodyRefusal(413, message, file_names=tuple(discard.file_names))
    return BodyRefusal(413, message, text_kept=True, file_names=tuple(discard.file_names))


def _forget_body(request: HttpRequest) -> None:
    """An empty form from now on, as Django's handler leaves it after such an error (this is its own
    method, which the type stubs leave out): the page that answers may ask for the form."""
    request._mark_post_parse_error()  # type: ignore[attr-defined]


def _said(error: Exception) -> tuple[int, str]:
    if isinstance(error, RequestDataTooBig):
        return 413, (
            f"The text sent is more than {filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)}, more than any "
            f"field here takes (a brief holds at most {settings.RUN_BRIEF_MAX_CHARS:,} characters). "
            "Files go as uploads, never inside the text."
        )
    if isinstance(error, TooManyFilesSent):
        return 413, (
            f"More than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files were sent at once: a creation takes at most "
            f"{settings.RUN_INPUT_MAX_FILES} files."
        )
    if isinstance(error, TooManyFieldsSent):
        return 413, f"The form holds more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields, more than any here."
    return 400, "What was sent could not be read: a form or an upload that is cut off or malformed. Send it again."


def _is_form(request: HttpRequest) -> bool:
    return request.method == "POST" and request.content_type in FORM_TYPES


def _content_length(request: HttpRequest) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0
