"""The agent: an OpenAI-compatible model acting in a sandbox through three
tools (execute_bash, str_replace_editor, submit), as in LLM-in-Sandbox.

Public API (used by the runs service and the `create` command):
run_agent, AgentEvent, AgentLimits, AgentOutcome, OutcomeReason, ModelClient,
model_client_for, demo_model_client, demo_follow_ups, demo_follow_up_refusal,
DEMO_MODEL_NAME, DEMO_MODEL_LABEL, SHOWCASE_BRIEFS.
"""

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
from sandboxes.agent.factory import model_client_for
from sandboxes.agent.loop import run_agent
from sandboxes.agent.model import ModelClient, ModelError, ModelReply, ToolCallRequest, Usage
from sandboxes.agent.openai_client import OpenAIModelClient

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
