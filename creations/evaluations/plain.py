"""A plain-mode task: one chat completion without tools, through the same guarded `openai` client
the agent uses (sandboxes.agent.model_client_for: its address rules, retries and timeouts)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from sandboxes import agent
from sandboxes.agent import ModelError
from workspaces.endpoints import KEY_UNREADABLE
from workspaces.fields import SealedSecret
from workspaces.models import ModelEndpoint


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    error: str = ""


def complete_plain(*, endpoint: ModelEndpoint, prompt: str) -> Completion:
    """The model's reply to `prompt`, or the error that stopped it (`error`, a sentence)."""
    if endpoint.retired_at is not None or not endpoint.is_enabled:
        return Completion("", 0, 0, 0.0, error=f"The model “{endpoint.name}” is switched off or deleted.")
    if isinstance(endpoint.api_key, SealedSecret):
        return Completion("", 0, 0, 0.0, error=f"The model “{endpoint.name}” cannot be used. {KEY_UNREADABLE}")
    # Looked up when called: the package imports the `openai` client for the processes that ask for it.
    client = agent.model_client_for(
        base_url=endpoint.base_url,
        model=endpoint.model,
        api_key=endpoint.api_key,
        extra_body=endpoint.extra_body or None,
        temperature=endpoint.temperature,
        max_tokens=endpoint.max_tokens,
    )
    started = time.monotonic()
    try:
        reply = client.complete(
            [{"role": "user", "content": prompt}], [], on_text=lambda _: None, on_reasoning=lambda _: None
        )
    except ModelError as error:
        return Completion("", 0, 0, time.monotonic() - started, error=str(error))
    return Completion(
        text=reply.content or "",
        prompt_tokens=reply.usage.prompt_tokens,
        completion_tokens=reply.usage.completion_tokens,
        seconds=time.monotonic() - started,
    )
