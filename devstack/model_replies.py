"""The chat-completion bodies the scripted model server sends for a script's reply: whole, or as the
chunks of a stream, with usage as scripted or estimated (devstack/scripted_model.py serves them)."""

from __future__ import annotations

import json
import time
from typing import Any

from devstack.model_script import Reply, ToolCallSpec


def _usage(body: dict[str, Any], entry: Reply) -> dict[str, int]:
    if entry.usage is not None:
        usage = dict(entry.usage)
        if "total_tokens" not in usage:  # a script may send any counts (even nonsense): they are sent as given
            usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        return usage
    prompt = sum(len(json.dumps(m)) for m in body.get("messages", [])) // 4
    completion = (len(entry.text) + len(entry.reasoning) + sum(len(c.arguments) for c in entry.tool_calls)) // 4 + 1
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _tool_call_id(index: int, spec: ToolCallSpec) -> str:
    return spec.call_id or f"call_{index}_{abs(hash(spec.arguments)) % 10**8}"


def completion(body: dict[str, Any], entry: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": entry.text or None}
    if entry.reasoning:
        message["reasoning_content"] = entry.reasoning
    if entry.tool_calls:
        message["tool_calls"] = [
            {"id": _tool_call_id(i, c), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for i, c in enumerate(entry.tool_calls)
        ]
    result: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(entry)}],
    }
    if not entry.omit_usage:
        result["usage"] = _usage(body, entry)
    return result


def _finish_reason(entry: Reply) -> str:
    return entry.finish_reason or ("tool_calls" if entry.tool_calls else "stop")


def stream_chunks(body: dict[str, Any], entry: Reply, model: str, include_usage: bool) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    size = max(1, entry.chunk_chars)
    chunks = [chunk({"role": "assistant", "content": ""})]
    for start in range(0, len(entry.reasoning), size):
        chunks.append(chunk({"reasoning_content": entry.reasoning[start : start + size]}))
    for start in range(0, len(entry.text), size):
        chunks.append(chunk({"content": entry.text[start : start + size]}))
    for index, spec in enumerate(entry.tool_calls):
        head = {
            "index": index,
            "id": _tool_call_id(index, spec),
            "type": "function",
            "function": {"name": spec.name, "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [head]}))
        for start in range(0, len(spec.arguments), 64):
            piece = {"index": index, "function": {"arguments": spec.arguments[start : start + 64]}}
            chunks.append(chunk({"tool_calls": [piece]}))
    chunks.append(chunk({}, _finish_reason(entry)))
    if include_usage and not entry.omit_usage:
        chunks.append(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [],
                "usage": _usage(body, entry),
            }
        )
    return chunks
