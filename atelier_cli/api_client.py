"""The API over HTTP: the personal access token on every request, problem details
turned into their `detail`, a dropped connection into which server could not be
reached, a rate limit waited out when the server says for how long, and each answer
checked into its typed object (atelier_cli/answers.py) as it arrives.

Requests go only to the configured server's /api/v1/ paths (never to an absolute URL
from an answer), so the token is never sent anywhere else.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import httpx
from pydantic import TypeAdapter, ValidationError

from atelier_cli.credentials import API_PREFIX, Credentials
from atelier_cli.errors import ApiError, MalformedAnswer, Unreachable
from atelier_cli.output import notice

USER_AGENT = "atelier-cli/1"
# Reads may wait a while: the event stream sends a keep-alive comment well within a minute.
TIMEOUT = httpx.Timeout(connect=10.0, read=60.0, write=60.0, pool=10.0)
# A 429 says how long to wait; longer than this and we give up and say so.
LONGEST_RATE_LIMIT_WAIT = 60
RATE_LIMIT_RETRIES = 3
# A run is made at most once however often this is retried: each try sends the same Idempotency-Key.
MAKE_ONCE_ATTEMPTS = 4
LOGIN_HINT = "Run `atelier login` with a working token (or set ATELIER_TOKEN)."
# How many of a malformed answer's problems to name.
PROBLEMS_NAMED = 3

T = TypeVar("T")


def describe_transport_error(error: httpx.TransportError) -> str:
    if isinstance(error, httpx.ConnectTimeout):
        reason = "no answer to the connection attempt"
    elif isinstance(error, httpx.ConnectError):
        reason = "the connection was refused, or there is no such host"
    elif isinstance(error, httpx.TimeoutException):
        reason = "the server stopped answering"
    elif isinstance(error, httpx.RemoteProtocolError):
        reason = "the connection closed unexpectedly"
    else:
        reason = "the connection failed"
    detail = str(error)
    return f"{reason} ({detail})" if detail else reason


def _problem_details(response: httpx.Response) -> str | None:
    """The `detail` of the API's problem details, if the answer has them."""
    try:
        body = response.json()
    except ValueError:
        return None
    detail = body.get("detail") if isinstance(body, dict) else None
    return detail if isinstance(detail, str) and detail else None


def problem_detail(response: httpx.Response) -> str:
    """The sentence to show for an error answer: its problem details' `detail`, or a plain
    description when the answer is not ours (a proxy's HTML page, say)."""
    detail = _problem_details(response)
    if detail is not None:
        message = detail
    elif response.status_code == 404:
        url = response.request.url
        origin = f"{url.scheme}://{url.netloc.decode()}"
        message = f"{origin} answered 404 Not Found for {url.path}, unlike the Atelier API: is this the right address?"
    else:
        message = f"The server answered {response.status_code} {response.reason_phrase}."
    return message


def _describe_problems(error: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(part) for part in problem['loc']) or 'the answer'}: {problem['msg']}"
        for problem in error.errors()[:PROBLEMS_NAMED]
    ]
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


def read_answer(response: httpx.Response, shape: TypeAdapter[T]) -> T:
    """The answer's JSON as the typed object `shape` describes; MalformedAnswer when it is not."""
    what = f"{response.request.method} {response.request.url.path}"
    try:
        body = response.json()
    except ValueError:
        raise MalformedAnswer(what, "it is not JSON") from None
    try:
        return shape.validate_python(body)
    except ValidationError as error:
        raise MalformedAnswer(what, _describe_problems(error)) from None


def _retry_after(response: httpx.Response) -> int | None:
    try:
        seconds = int(response.headers.get("Retry-After", ""))
    except ValueError:
        return None
    return seconds if 0 <= seconds <= LONGEST_RATE_LIMIT_WAIT else None


class ApiClient:
    def __init__(
        self,
        credentials: Credentials,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.server_url = credentials.url
        self.sleep = sleep
        self.http = httpx.Client(
            base_url=credentials.url + API_PREFIX,
            headers={"Authorization": f"Bearer {credentials.token}", "User-Agent": USER_AGENT},
            timeout=TIMEOUT,
            transport=transport,
        )

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def unreachable(self, error: httpx.TransportError) -> Unreachable:
        return Unreachable(self.server_url, describe_transport_error(error))

    @contextmanager
    def stream(self, method: str, path: str, **kwargs: Any) -> Iterator[httpx.Response]:
        """A response whose body is read as it arrives; error answers raise ApiError,
        a lost connection Unreachable (also while the body is being read)."""
        for attempt in range(RATE_LIMIT_RETRIES + 1):
            try:
                with self.http.stream(method, path, **kwargs) as response:
                    if response.status_code == 429 and attempt < RATE_LIMIT_RETRIES:
                        wait = _retry_after(response)
                        if wait is not None:
                            response.close()
                            notice(f"The server asks us to slow down; waiting {wait} s…")
                            self.sleep(wait)
                            continue
                    if response.status_code >= 400:
                        response.read()
                        hint = LOGIN_HINT if response.status_code == 401 else ""
                        ours = _problem_details(response) is not None
                        raise ApiError(response.status_code, problem_detail(response), hint=hint, ours=ours)
                    yield response
                    return
            except httpx.TransportError as error:
                raise self.unreachable(error) from error

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        with self.stream(method, path, **kwargs) as response:
            response.read()
        return response

    def get(self, path: str, shape: TypeAdapter[T], **kwargs: Any) -> T:
        return read_answer(self.request("GET", path, **kwargs), shape)

    def post(self, path: str, shape: TypeAdapter[T], **kwargs: Any) -> T:
        return read_answer(self.request("POST", path, **kwargs), shape)

    def send(self, method: str, path: str, shape: TypeAdapter[T], **kwargs: Any) -> T:
        """Another method (PATCH, PUT) whose answer has a body."""
        return read_answer(self.request(method, path, **kwargs), shape)

    def post_once(self, path: str, body: dict[str, Any], shape: TypeAdapter[T], *, key: str | None = None) -> T:
        """POST what makes a run, retrying after a network error with the same Idempotency-Key:
        the server answers a repeat with the run the first try made, never a second one."""
        headers = {"Idempotency-Key": key or str(uuid.uuid4())}
        for attempt in range(1, MAKE_ONCE_ATTEMPTS + 1):
            try:
                return self.post(path, shape, json=body, headers=headers)
            except Unreachable as error:
                if attempt == MAKE_ONCE_ATTEMPTS:
                    raise
                notice(f"{error}; trying again (the run will be made once)…")
                self.sleep(2.0 ** (attempt - 1))
        raise AssertionError("unreachable")  # the loop returns or raises
