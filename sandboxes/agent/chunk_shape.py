"""The shape a streamed chat-completion chunk must have to be read (sandboxes/agent/openai_client.py)."""

from __future__ import annotations

from typing import Any

from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import (
    Choice,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
)


def chunk_readable(chunk: Any) -> bool:
    """Whether a streamed chunk holds what the reader takes from it, of the types it takes: the
    openai package builds chunks without validating them."""
    if not isinstance(chunk, ChatCompletionChunk) or not isinstance(chunk.choices, list):
        return False
    return all(_choice_readable(choice) for choice in chunk.choices)


def _choice_readable(choice: Any) -> bool:
    if not isinstance(choice, Choice) or not isinstance(choice.delta, ChoiceDelta):
        return False
    delta = choice.delta
    if not (_text_or_none(delta.content) and _text_or_none(choice.finish_reason)):
        return False
    if delta.tool_calls is None:
        return True
    return isinstance(delta.tool_calls, list) and all(_tool_call_readable(piece) for piece in delta.tool_calls)


def _tool_call_readable(piece: Any) -> bool:
    # A missing index is read as the first call: some servers leave it out when they make one call at a time.
    if not isinstance(piece, ChoiceDeltaToolCall) or not isinstance(piece.index, int | None):
        return False
    function = piece.function
    if function is not None and not (
        isinstance(function, ChoiceDeltaToolCallFunction)
        and _text_or_none(function.name)
        and _text_or_none(function.arguments)
    ):
        return False
    return _text_or_none(piece.id)


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)
