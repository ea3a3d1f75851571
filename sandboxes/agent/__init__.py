"""The agent: an OpenAI-compatible model acting in a sandbox through three
tools (execute_bash, str_replace_editor, submit), as in LLM-in-Sandbox.

Public API (used by the runs service and the `create` command):
run_agent, AgentEvent, AgentLimits, AgentOutcome, OutcomeReason, ModelClient,
model_client_for, demo_model_client, demo_follow_ups, demo_follow_up_refusal,
DEMO_MODEL_NAME, DEMO_MODEL_LABEL, SHOWCASE_BRIEFS.
"""

from typing import TYPE_CHECKING, Any

from sandboxes.agent.demo import (
    DEMO_MODEL_LABEL,
    DEMO_MODEL_NAME,
    SHOWCASE_BRIEFS,
    DemoModelClient,
    demo_follow_up_refusal,
    demo_follow_ups,
    demo_model_client,
)
from sandboxes.agent.events import (
    EVENT_KINDS,
    OUTCOME_REASONS,
    AgentEvent,
    AgentLimits,
    AgentOutcome,
    Continuation,
    EarlierVersion,
    Emit,
    Inbox,
    InboxMessage,
    OutcomeReason,
)
from sandboxes.agent.loop import run_agent
from sandboxes.agent.model import ModelClient, ModelError, ModelReply, ToolCallRequest, Usage

if TYPE_CHECKING:
    from sandboxes.agent.factory import model_client_for
    from sandboxes.agent.openai_client import OpenAIModelClient

# The `openai` library takes about a second of CPU to import. Every Django process reads the agent's
# defaults from this package through its settings; only those that talk to a model need the client.
_IMPORTED_WHEN_ASKED = {
    "model_client_for": "sandboxes.agent.factory",
    "OpenAIModelClient": "sandboxes.agent.openai_client",
}


def __getattr__(name: str) -> Any:
    module = _IMPORTED_WHEN_ASKED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


__all__ = [
    "DEMO_MODEL_LABEL",
    "DEMO_MODEL_NAME",
    "EVENT_KINDS",
    "OUTCOME_REASONS",
    "SHOWCASE_BRIEFS",
    "AgentEvent",
    "AgentLimits",
    "AgentOutcome",
    "Continuation",
    "DemoModelClient",
    "EarlierVersion",
    "Emit",
    "Inbox",
    "InboxMessage",
    "ModelClient",
    "ModelError",
    "ModelReply",
    "OpenAIModelClient",
    "OutcomeReason",
    "ToolCallRequest",
    "Usage",
    "demo_follow_up_refusal",
    "demo_follow_ups",
    "demo_model_client",
    "model_client_for",
    "run_agent",
]
