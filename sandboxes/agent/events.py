"""What the agent loop reports while it works, and the limits and outcome of a run.

These types are the contract with the runs service: it persists every event
and streams it to the browser. Each kind's payload is one of the models
below, carried as that model until it is stored as JSON. The platform stores
them under the schemas of creations/events/schema.py, which take these models
and add its own kinds and the fields storing adds; this package must not
import it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from sandboxes.agent.model import Usage
from sandboxes.agent.usage import RunUsage


class OutcomeReason(StrEnum):
    """Why a run of the loop ended. Its value is what the `finished` event carries."""

    SUBMITTED = "submitted"
    STEP_LIMIT = "step_limit"
    TOKEN_LIMIT = "token_limit"  # noqa: S105 - a reason, not a secret
    TIME_LIMIT = "time_limit"
    # The caller's budget check (`over_budget`) said stop, and the model was given one step to submit.
    BUDGET_EXHAUSTED = "budget_exhausted"
    CANCELLED = "cancelled"
    MODEL_ERROR = "model_error"
    SANDBOX_ERROR = "sandbox_error"


OUTCOME_REASONS: tuple[OutcomeReason, ...] = tuple(OutcomeReason)


class EventPayload(BaseModel):
    """What one agent event carries. Undeclared fields are refused: a field the
    loop starts sending must be declared here first, where the platform (which
    stores, streams and renders every event) reads the contract. Types are
    strict: "3" is not a step and 1 is not True, so a drift in what the loop
    sends is caught, not quietly converted."""

    model_config = ConfigDict(extra="forbid", strict=True)


class StepStarted(EventPayload):
    step: int
    remaining: int  # steps left after this one


class TextDelta(EventPayload):
    """A streamed piece of the model's answer (`assistant_delta`) or reasoning (`reasoning_delta`)."""

    step: int
    text: str


class AssistantMessage(EventPayload):
    step: int
    content: str | None = None
    reasoning: str | None = None


class ToolCall(EventPayload):
    step: int
    call_id: str
    name: str
    arguments: dict[str, Any]  # {"raw": text} when the model's JSON could not be parsed


class ToolOutputDelta(EventPayload):
    step: int
    call_id: str
    text: str


class ToolResult(EventPayload):
    step: int
    call_id: str
    name: str
    output: str
    is_error: bool
    exit_code: int | None = None
    duration: float


class UsageReport(EventPayload):
    """What one step's model reply used."""

    step: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    estimated: bool

    @classmethod
    def of_reply(cls, step: int, usage: Usage) -> UsageReport:
        return cls(
            step=step,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
            estimated=usage.estimated,
        )

    def run_usage(self) -> RunUsage:
        """As a part of the run's usage: one step and its tokens (a count an endpoint gave below zero, none)."""
        return RunUsage(
            steps=1, prompt_tokens=max(self.prompt_tokens, 0), completion_tokens=max(self.completion_tokens, 0)
        )


class ErrorReport(EventPayload):
    step: int | None = None
    message: str


class PersonMessage(EventPayload):
    """What a person watching the run told the agent; it went into the model's next request."""

    step: int
    author: str
    text: str


class Finished(EventPayload):
    # Its value, when read back from a stored payload (strict would take only the enum member itself).
    reason: Annotated[OutcomeReason, Field(strict=False)]
    steps: int
    message: str


# Every kind the loop emits, with its payload.
AGENT_EVENT_PAYLOADS: dict[str, type[EventPayload]] = {
    "step_started": StepStarted,
    "assistant_delta": TextDelta,
    "reasoning_delta": TextDelta,
    "assistant_message": AssistantMessage,
    "tool_call": ToolCall,
    "tool_output_delta": ToolOutputDelta,
    "tool_result": ToolResult,
    "usage": UsageReport,
    "error": ErrorReport,
    "person_message": PersonMessage,
    "finished": Finished,
}
EVENT_KINDS = tuple(AGENT_EVENT_PAYLOADS)


@dataclass(frozen=True)
class AgentEvent:
    kind: str
    payload: EventPayload  # of the model AGENT_EVENT_PAYLOADS declares for `kind`

    def __post_init__(self) -> None:
        declared = AGENT_EVENT_PAYLOADS.get(self.kind)
        if declared is None:
            raise ValueError(f"{self.kind!r} is not an agent event kind")
        if not isinstance(self.payload, declared):
            raise TypeError(f"a {self.kind!r} event carries a {declared.__name__}, not a {type(self.payload).__name__}")


Emit = Callable[[AgentEvent], None]

# Asked once per step: a message saying which budget outside the run's own limits is
# used up (the caller's, e.g. a team's monthly one), or None to go on.
BudgetCheck = Callable[[], str | None]


@dataclass(frozen=True)
class InboxMessage:
    author: str
    text: str


# Asked before each model request: what people watching the run said since the last time.
Inbox = Callable[[], Sequence[InboxMessage]]


@dataclass(frozen=True)
class EarlierVersion:
    """One earlier version of the work, as the next one carries it: what was asked, what the agent said it made."""

    request: str
    summary: str


@dataclass(frozen=True)
class Continuation:
    """A run that continues earlier work (a refine): its sandbox starts with that version's /testbed."""

    instruction: str
    from_version: int
    earlier: Sequence[EarlierVersion]
    # What the restored /testbed lacks (blank: all of it is there).
    left_out: str = ""
    # Input files the platform renamed: their name in /testbed/input -> the name the person gave them,
    # which the earlier requests may use.
    renamed_inputs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentLimits:
    max_steps: int
    max_tokens: int | None = None  # prompt + completion tokens over the whole run
    max_wall_seconds: float | None = None
    command_timeout: float = 180.0  # per execute_bash call


@dataclass(frozen=True)
class AgentOutcome:
    reason: OutcomeReason
    message: str
    usage: RunUsage  # the steps begun (the last may have ended before its reply) and the tokens used
