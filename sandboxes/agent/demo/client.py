"""The demo model: replays a bundled trajectory through the normal loop.

It answers like a real endpoint (streamed text, tool calls, estimated usage),
so the sandbox, events, artifacts and UI all do their real work; only the
model's choices are recorded. Given a follow-up, it plays that recording (a
showcase's second version) instead of the showcase's own. The step it plays
is the number of assistant turns this run has already taken, so a retried
request replays the same step.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from sandboxes.agent.config import agent_setting
from sandboxes.agent.demo.trajectory import FollowUp, Trajectory
from sandboxes.agent.model import ModelCancelled, ModelReply, TextSink, ToolCallRequest, Usage
from sandboxes.agent.tokens import estimate_prompt_tokens, estimate_text_tokens

DEMO_MODEL_NAME = "demo"
DEMO_MODEL_LABEL = "Demo model (replay)"
PIECE_CHARS = 12
SUBMIT_WHEN_DONE = {"summary": "The demo replay has no more recorded steps."}


class DemoModelClient:
    def __init__(
        self, trajectory: Trajectory, *, follow_up: FollowUp | None = None, typing_delay: float | None = None
    ) -> None:
        self.trajectory = trajectory
        self.follow_up = follow_up
        self._typing_delay = agent_setting("AGENT_DEMO_TYPING_DELAY") if typing_delay is None else typing_delay

    @property
    def name(self) -> str:
        return DEMO_MODEL_NAME

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        on_text: TextSink,
        on_reasoning: TextSink,
        cancel: threading.Event | None = None,
    ) -> ModelReply:
        index = _turns_taken(messages)
        steps = self.trajectory.steps if self.follow_up is None else self.follow_up.steps
        if index < len(steps):
            text, calls = steps[index].text, steps[index].calls
        else:
            text, calls = "", (("submit", SUBMIT_WHEN_DONE),)
        for start in range(0, len(text), PIECE_CHARS):
            if cancel is not None and cancel.is_set():
                raise ModelCancelled("cancelled")
            on_text(text[start : start + PIECE_CHARS])
            if self._typing_delay:
                time.sleep(self._typing_delay)
        tool_calls = [
            ToolCallRequest(call_id=f"demo_{index + 1}_{n}", name=name, arguments=json.dumps(arguments))
            for n, (name, arguments) in enumerate(calls)
        ]
        produced = text + "".join(call.arguments for call in tool_calls)
        usage = Usage(estimate_prompt_tokens(messages, tools), estimate_text_tokens(produced), estimated=True)
        return ModelReply(
            content=text,
            tool_calls=tool_calls,
            usage=usage,
            finish_reason="tool_calls" if tool_calls else "stop",
        )


def _turns_taken(messages: list[dict[str, Any]]) -> int:
    """The assistant turns of this run. A refine's conversation starts with the earlier versions
    (each a request and the agent's summary): those are not this run's, so counting starts after
    this run's task, the last user message before the first tool call."""
    first_call = next(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")), len(messages)
    )
    task = max((i for i, m in enumerate(messages[:first_call]) if m.get("role") == "user"), default=-1)
    return sum(1 for message in messages[task + 1 :] if message.get("role") == "assistant")
