"""What the scripted model server plays: replies, tool calls, errors, dropped connections and
answers no model should give.

Built with `reply`, `call`, `bash`, `submit`, `http_error`, `drop`, `raw` and `events`; played by
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


@dataclass(frozen=True)
class Raw:
    """An answer sent byte for byte, whatever was asked: what a broken endpoint, or a proxy in
    front of one, may say (an HTML page, a stream cut off mid-JSON, events of the wrong shape)."""

    body: bytes
    content_type: str = "text/event-stream"
    status: int = 200
    delay: float = 0.0


ScriptEntry = Reply | HttpError | Drop | Raw | Callable[[dict[str, Any]], Any]


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


def raw(body: bytes | str, *, content_type: str = "text/event-stream", status: int = 200, delay: float = 0.0) -> Raw:
    data = body.encode() if isinstance(body, str) else body
    return Raw(body=data, content_type=content_type, status=status, delay=delay)


def events(*items: dict[str, Any] | list[Any] | str, done: bool = True, delay: float = 0.0) -> Raw:
    """A stream of server-sent events, each `data:` as given: a dict or list sent as JSON, a str
    verbatim (half a JSON object, say); `done` ends it with `[DONE]` as real servers do."""
    lines = [item if isinstance(item, str) else json.dumps(item) for item in items]
    if done:
        lines.append("[DONE]")
    return raw("".join(f"data: {line}\n\n" for line in lines), delay=delay)


def delta_chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    """One well-formed streamed chunk, for `events`: `delta_chunk({"content": "Hi"}, "stop")`."""
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


CONTEXT_OVERFLOW = HttpError(
    400,
    "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens. "
    "Please reduce the length of the messages.",
    code="context_length_exceeded",
    error_type="invalid_request_error",
)
