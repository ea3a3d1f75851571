"""What a command writes besides its words for people: with --json, its result on stdout
as one JSON document (or one JSON object a line while it follows a run), and on stderr
one JSON object a line too: notices (`{"notice": …}`) and, last, the error that ended it.

Notices come from deep inside (waiting out a rate limit, reconnecting a stream), so
whether they are JSON is the command's context, set once by main() for its run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from atelier_cli.errors import CliError

_notices_as_json: ContextVar[bool] = ContextVar("atelier_notices_as_json", default=False)


@contextmanager
def notices_as_json(on: bool) -> Iterator[None]:
    token = _notices_as_json.set(on)
    try:
        yield
    finally:
        _notices_as_json.reset(token)


def _dumps(value: Any, *, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def notice(text: str) -> None:
    """Something a person watching should know (the command goes on): on stderr."""
    print(_dumps({"notice": text}) if _notices_as_json.get() else text, file=sys.stderr, flush=True)


def print_document(document: Any) -> None:
    """A command's whole result, on stdout."""
    print(_dumps(document, indent=2), flush=True)


def print_record(record_type: str, **fields: Any) -> None:
    """One line of a followed run's JSON Lines on stdout: `{"type": record_type, …}`."""
    print(_dumps({"type": record_type, **fields}), flush=True)


def error_document(error: CliError) -> dict[str, Any]:
    return {
        "error": error.exit_status.label,
        "exit_status": int(error.exit_status),
        "message": str(error),
        "http_status": error.http_status,
    }


def report_error(error: CliError, *, as_json: bool) -> None:
    sys.stdout.flush()
    text = _dumps(error_document(error)) if as_json else error.for_people()
    print(text, file=sys.stderr, flush=True)
