"""Rough token counts for endpoints that do not report usage.

About four characters per token holds well enough for English text and code
across common tokenizers; usage marked `estimated` tells the reader so.
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 4  # role and framing


def estimate_text_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_prompt_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    total = estimate_text_tokens(json.dumps(tools)) if tools else 0
    for message in messages:
        total += TOKENS_PER_MESSAGE + estimate_text_tokens(str(message.get("content") or ""))
        for call in message.get("tool_calls") or ():
            total += estimate_text_tokens(call["function"]["name"] + call["function"]["arguments"])
    return total
