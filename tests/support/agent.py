"""Running the agent against the scripted server, collecting its events."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from devstack.scripted_model import ScriptedModel
from sandboxes.agent import AgentEvent, AgentLimits, AgentOutcome, model_client_for, run_agent
from sandboxes.agent.events import BudgetCheck
from sandboxes.agent.model import ModelClient


@dataclass
class Recorder:
    events: list[AgentEvent] = field(default_factory=list)

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The payloads of `kind`, as they are stored."""
        return [event.payload.model_dump(mode="json") for event in self.events if event.kind == kind]


def client_for(server: ScriptedModel, **options: Any) -> ModelClient:
    options.setdefault("backoff_initial", 0.01)
    options.setdefault("backoff_max", 0.05)
    return model_client_for(base_url=server.base_url, model=server.model, api_key="test-key", extra_body={}, **options)


def run(
    sandbox: Any,
    model: ModelClient,
    *,
    max_steps: int = 10,
    recorder: Recorder | None = None,
    cancel: threading.Event | None = None,
    brief: str = "make something",
    over_budget: BudgetCheck | None = None,
    **limits: Any,
) -> tuple[AgentOutcome, Recorder]:
    recorder = recorder or Recorder()
    outcome = run_agent(
        sandbox=sandbox,
        model=model,
        brief=brief,
        limits=AgentLimits(max_steps=max_steps, **limits),
        emit=recorder,
        cancel=cancel,
        editor=getattr(sandbox, "editor", None),
        over_budget=over_budget,
    )
    return outcome, recorder
