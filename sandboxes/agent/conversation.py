"""The chat history sent to the model, and how it is made to fit.

When the endpoint says the conversation is over its context window, the
oldest observations are shortened first (they matter least for the next
step), then the oldest whole steps are dropped; the system prompt, the task
and the latest step are always kept.
"""

from __future__ import annotations

import json
from typing import Any

from sandboxes.agent.model import ModelReply, ToolCallRequest

ELIDE_ABOVE_CHARS = 400
KEEP_WHEN_ELIDED_CHARS = 200
LAST_RESORT_CHARS = 2000
DROPPED_NOTE = "[Earlier steps were removed to fit the model's context window.]"


class Conversation:
    def __init__(self, system_prompt: str, task: str, *, earlier: list[dict[str, Any]] | None = None) -> None:
        """`earlier`: the conversation of earlier versions (bounded by whoever made it), before the task."""
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_prompt},
            *(earlier or []),
            {"role": "user", "content": task},
        ]
        self._header = len(self.messages)  # messages never shortened nor dropped

    def add_assistant(self, reply: ModelReply, calls: list[ToolCallRequest]) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in calls
            ]
        else:
            message["content"] = reply.content or ""
        self.messages.append(message)

    def add_tool_result(self, call_id: str, content: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})

    def add_user_note(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def append_to_last(self, note: str) -> None:
        """Attach a short note (steps left) to the latest observation."""
        last = self.messages[-1]
        if last["role"] in ("tool", "user") and len(self.messages) > self._header:
            last["content"] = f"{last['content']}\n\n{note}"
        else:
            self.add_user_note(note)

    def shrink(self) -> bool:
        """Make the history smaller; False when nothing more can go."""
        return self._elide_old_observations() or self._drop_oldest_step() or self._truncate_recent()

    def _latest_step_start(self) -> int:
        for index in range(len(self.messages) - 1, self._header - 1, -1):
            if self.messages[index]["role"] == "assistant":
                return index
        return len(self.messages)

    def _elide_old_observations(self) -> bool:
        boundary = self._latest_step_start()
        candidates = [
            index for index in range(self._header, boundary) if _size(self.messages[index]) > ELIDE_ABOVE_CHARS
        ]
        if not candidates:
            return False
        for index in candidates:
            _elide(self.messages[index])
        return True

    def _drop_oldest_step(self) -> bool:
        boundary = self._latest_step_start()
        start = self._header
        if start < len(self.messages) and self.messages[start].get("content") == DROPPED_NOTE:
            start += 1
        if start >= boundary:
            return False
        end = start + 1
        # A step is an assistant message and what followed it up to the next one.
        while end < boundary and self.messages[end]["role"] != "assistant":
            end += 1
        del self.messages[start:end]
        if self.messages[self._header].get("content") != DROPPED_NOTE:
            self.messages.insert(self._header, {"role": "user", "content": DROPPED_NOTE})
        return True

    def _truncate_recent(self) -> bool:
        changed = False
        for message in self.messages[self._header :]:
            content = message.get("content")
            if isinstance(content, str) and len(content) > LAST_RESORT_CHARS:
                half = LAST_RESORT_CHARS // 2
                message["content"] = (
                    f"{content[:half]}\n[... shortened to fit the context window ...]\n{content[-half:]}"
                )
                changed = True
        return changed


def _size(message: dict[str, Any]) -> int:
    size = len(message.get("content") or "")
    for call in message.get("tool_calls") or ():
        size += len(call["function"]["arguments"])
    return size


def _elide(message: dict[str, Any]) -> None:
    content = message.get("content")
    if isinstance(content, str) and len(content) > ELIDE_ABOVE_CHARS:
        message["content"] = (
            f"{content[:KEEP_WHEN_ELIDED_CHARS]}\n"
            f"[... {len(content) - KEEP_WHEN_ELIDED_CHARS} characters removed to fit the context window ...]"
        )
    for call in message.get("tool_calls") or ():
        function = call["function"]
        if len(function["arguments"]) > ELIDE_ABOVE_CHARS:
            function["arguments"] = _elided_arguments(function["arguments"])


def _elided_arguments(raw: str) -> str:
    """Keep the call readable (and valid JSON) while dropping bulky values
    such as the text of a file the model already wrote."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return json.dumps({"note": "arguments removed to fit the context window"})
    if not isinstance(value, dict):
        return json.dumps({"note": "arguments removed to fit the context window"})
    slim = {
        key: (
            f"[{len(item)} characters removed]"
            if isinstance(item, str) and len(item) > KEEP_WHEN_ELIDED_CHARS
            else item
        )
        for key, item in value.items()
    }
    return json.dumps(slim)
