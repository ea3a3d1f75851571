"""What the scripted model server plays: replies, tool calls, errors and dropped connections.

Built with `reply`, `call`, `bash`, `submit`, `http_error` and `drop`; played by
`devstack.scripted_model.ScriptedModel` (which re-exports these names).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCallSpec:
    name: str
    arguments: str  # raw JSON text (or deliberately not JSON)
    call_id: str | None = None


@dataclass(frozen=True)
class Reply:
    text: str = ""
    tool_calls: tuple[ToolCallSpec, ...] = ()
    reasoning: str = ""
    usage: dict[str, int] | None = None  # None: computed; omit_usage drops it
    omit_usage: bool = False
    delay: float = 0.0
    chunk_chars: int = 8  # streamed text is cut into pieces of this size
    finish_reason: str | None = None


@dataclass(frozen=True)
class HttpError:
    status: int
    message: str = "scripted error"
    code: str | None = None
    error_type: str = "server_error"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Drop:
    after_chunks: int = 0  # 0: before any response byte
    delay: float = 0.0


ScriptEntry = Reply | HttpError | Drop | Callable[[dict[str, Any]], Any]


def call(
    name: str, arguments: dict[str, Any] | None = None, *, raw: str | None = None, call_id: str | None = None
) -> ToolCallSpec:
    text = raw if raw is not None else json.dumps(arguments or {})
    return ToolCallSpec(name=name, arguments=text, call_id=call_id)


def reply(
    text: str = "",
    tool_calls: Iterable[ToolCallSpec] = (),
    *,
    reasoning: str = "",
    usage: dict[str, int] | None = None,
    omit_usage: bool = False,
    delay: float = 0.0,
    chunk_chars: int = 8,
) -> Reply:
    return Reply(
        text=text,
        tool_calls=tuple(tool_calls),
        reasoning=reasoning,
        usage=usage,
        omit_usage=omit_usage,
        delay=delay,
        chunk_chars=chunk_chars,
    )


def bash(command: str, text: str = "", **options: Any) -> Reply:
    """Shorthand: a reply that runs one shell command."""
    return reply(text, [call("execute_bash", {"command": command})], **options)


def submit(summary: str = "done", text: str = "") -> Reply:
    return reply(text, [call("submit", {"summary": summary})])


def http_error(status: int, message: str = "scripted error", **options: Any) -> HttpError:
    return HttpError(status=status, message=message, **options)


def drop(after_chunks: int = 0, delay: float = 0.0) -> Drop:
    return Drop(after_chunks=after_chunks, delay=delay)


CONTEXT_OVERFLOW = HttpError(
    400,
    "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens. "
    "Please reduce the length of the messages.",
    code="context_length_exceeded",
    error_type="invalid_request_error",
)
