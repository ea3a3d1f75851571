"""What a command writes: its lines for people on stdout, notices on stderr and, last,
the error that ended it; with --json, its result on stdout as one JSON document (or one
JSON object a line while it follows a run), and on stderr one JSON object a line too:
notices (`{"notice": …}`) and, last, the error.

Much of what is written comes from the server: titles, briefs, file names, what a model
or an agent wrote, an error's detail. Lines for people reach the terminal through
`printable` (no escape sequences, no control characters); JSON carries every string
whole, with each control character escaped (`\u001b`, `\u009b`), so a script gets the
value as stored and a terminal showing the JSON acts on none of it.

Notices come from deep inside (waiting out a rate limit, reconnecting a stream), so
whether they are JSON is the command's context, set once by main() for its run.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from atelier_cli.errors import CliError
from atelier_cli.terminal import printable

_notices_as_json: ContextVar[bool] = ContextVar("atelier_notices_as_json", default=False)


@contextmanager
def notices_as_json(on: bool) -> Iterator[None]:
    token = _notices_as_json.set(on)
    try:
        yield
    finally:
        _notices_as_json.reset(token)


# json escapes C0 controls itself; with ensure_ascii=False it leaves DEL and C1 (8-bit
# CSI, OSC, …) as they are. JSON's own syntax is ASCII, so these occur only inside strings.
_UNESCAPED_CONTROLS = re.compile(r"[\x7f-\x9f]")


def _dumps(value: Any, *, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _UNESCAPED_CONTROLS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def print_line(text: str = "") -> None:
    """A line for people on stdout."""
    print(printable(text), flush=True)


def notice(text: str) -> None:
    """Something a person watching should know (the command goes on): on stderr."""
    print(_dumps({"notice": text}) if _notices_as_json.get() else printable(text), file=sys.stderr, flush=True)


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
    text = _dumps(error_document(error)) if as_json else printable(error.for_people())
    print(text, file=sys.stderr, flush=True)
