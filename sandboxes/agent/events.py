"""What the agent loop reports while it works, and the limits and outcome of a run.

These types are the contract with the runs service: it persists every event
and streams it to the browser, so payloads stay plain JSON-able dicts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Event kinds and their payload keys:
#   step_started       {step, remaining}          remaining = steps left after this one
#   assistant_delta    {step, text}
#   reasoning_delta    {step, text}
#   assistant_message  {step, content, reasoning}
#   tool_call          {step, call_id, name, arguments}
#   tool_output_delta  {step, call_id, text}
#   tool_result        {step, call_id, name, output, is_error, exit_code, duration}
#   usage              {step, prompt_tokens, completion_tokens, total_tokens, estimated}
#   error              {step, message}
#   finished           {reason, steps, message}
EVENT_KINDS = (
    "step_started",
    "assistant_delta",
    "reasoning_delta",
    "assistant_message",
    "tool_call",
    "tool_output_delta",
    "tool_result",
    "usage",
    "error",
    "finished",
)

OUTCOME_REASONS = (
    "submitted",
    "step_limit",
    "token_limit",
    "time_limit",
    "cancelled",
    "model_error",
    "sandbox_error",
)


@dataclass(frozen=True)
class AgentEvent:
    kind: str
    payload: dict[str, Any]


Emit = Callable[[AgentEvent], None]


@dataclass(frozen=True)
class AgentLimits:
    max_steps: int
    max_tokens: int | None = None  # prompt + completion tokens over the whole run
    max_wall_seconds: float | None = None
    command_timeout: float = 180.0  # per execute_bash call


@dataclass(frozen=True)
class AgentOutcome:
    reason: str  # one of OUTCOME_REASONS
    message: str
    steps: int
    prompt_tokens: int
    completion_tokens: int
