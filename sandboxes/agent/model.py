"""The model side of the loop: what the agent asks of any model client.

A client turns a conversation (OpenAI chat messages) and tool schemas into one
assistant reply, streaming text and reasoning as it arrives. Errors are sorted
into three kinds the loop treats differently.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

TextSink = Callable[[str], None]


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call as the model sent it; `arguments` is the raw JSON text,
    parsed (and possibly rejected) by the tool dispatcher, not here."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ModelReply:
    content: str
    reasoning: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    usage: Usage = Usage(0, 0, estimated=True)
    finish_reason: str | None = None


class ModelError(Exception):
    """The model endpoint failed for good (after retries, or at once for
    errors that retrying cannot fix such as a bad key or an unknown model)."""


class ContextOverflowError(ModelError):
    """The conversation no longer fits the model's context window."""


class ModelCancelled(ModelError):
    """The request was abandoned because the run was cancelled."""


class ModelClient(Protocol):
    """Anything that can produce the next assistant reply."""

    @property
    def name(self) -> str: ...

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        on_text: TextSink,
        on_reasoning: TextSink,
        cancel: threading.Event | None = None,
    ) -> ModelReply:
        """Ask for the next reply. Raises ModelError (or a subclass) only."""
        ...
