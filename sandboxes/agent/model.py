"""The model side of the loop: what the agent asks of any model client.

A client turns a conversation (OpenAI chat messages) and tool schemas into one
assistant reply, streaming text and reasoning as it arrives. Errors are sorted
into three kinds the loop treats differently.
"""

from __future__ import annotations

import math
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

    @classmethod
    def reported(cls, prompt_tokens: object, completion_tokens: object, *, most: int) -> Usage:
        """What an endpoint says a reply used, held to what one reply can use: each count a whole
        number from 0 to `most` (one that is missing or not a number counts 0). The endpoint's
        figures are untrusted: whatever it sends, the run's totals, its budget checks and the
        usage ledger add up sensible numbers."""
        return cls(_token_count(prompt_tokens, most), _token_count(completion_tokens, most))


def _token_count(count: object, most: int) -> int:
    if isinstance(count, bool) or not isinstance(count, int | float) or math.isnan(count):
        return 0
    return int(min(max(count, 0), most))


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
