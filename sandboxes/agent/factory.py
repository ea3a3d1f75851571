"""Building a model client from what a workspace registered."""

from __future__ import annotations

from typing import Any

from sandboxes.agent.config import agent_setting
from sandboxes.agent.model import ModelClient
from sandboxes.agent.openai_client import OpenAIModelClient
from sandboxes.agent.retry import RetryPolicy


def model_client_for(
    *,
    base_url: str,
    model: str,
    api_key: str = "",
    extra_body: dict[str, Any] | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    timeout: float | None = None,
    connect_timeout: float | None = None,
    retries: int | None = None,
    backoff_initial: float | None = None,
    backoff_max: float | None = None,
) -> ModelClient:
    """An OpenAI-compatible client; unset knobs come from the AGENT_* settings."""
    retry = RetryPolicy(
        retries=agent_setting("AGENT_MODEL_RETRIES") if retries is None else retries,
        initial_delay=agent_setting("AGENT_MODEL_BACKOFF_INITIAL") if backoff_initial is None else backoff_initial,
        max_delay=agent_setting("AGENT_MODEL_BACKOFF_MAX") if backoff_max is None else backoff_max,
    )
    return OpenAIModelClient(
        base_url=base_url,
        model=model,
        api_key=api_key,
        extra_body=extra_body,
        temperature=temperature,
        max_tokens=max_tokens,
        timeout=agent_setting("AGENT_MODEL_TIMEOUT") if timeout is None else timeout,
        connect_timeout=agent_setting("AGENT_MODEL_CONNECT_TIMEOUT") if connect_timeout is None else connect_timeout,
        retry=retry,
        allow_private=bool(agent_setting("MODEL_ENDPOINT_ALLOW_PRIVATE")),
        max_reported_tokens=int(agent_setting("AGENT_MODEL_MAX_REPORTED_TOKENS")),
    )
