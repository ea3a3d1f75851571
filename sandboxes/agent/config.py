"""Agent knobs from Django settings (config/settings/agent.py).

DEFAULTS is the one source of their default values: the settings read them
from here, and the package uses them as they are outside Django."""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    "AGENT_MAX_STEPS": 40,
    "AGENT_MAX_WALL_SECONDS": 1800.0,
    "AGENT_MODEL_TIMEOUT": 120.0,
    "AGENT_MODEL_CONNECT_TIMEOUT": 10.0,
    "AGENT_MODEL_RETRIES": 4,
    "AGENT_MODEL_BACKOFF_INITIAL": 0.5,
    "AGENT_MODEL_BACKOFF_MAX": 20.0,
    "AGENT_DEMO_TYPING_DELAY": 0.0,
    "SANDBOX_COMMAND_TIMEOUT": 180.0,
    # The most tokens one reply's usage may count, prompt and completion each: past the largest
    # context windows served today, so only a broken or hostile endpoint's figures are cut to it.
    "AGENT_MODEL_MAX_REPORTED_TOKENS": 2_000_000,
    # Outside the platform whoever runs the agent picks the model, often on
    # their own machine; the platform's settings decide for its workspaces.
    "MODEL_ENDPOINT_ALLOW_PRIVATE": True,
    # Hosts the agent's pages may load from when shown (the platform's ARTIFACT_PAGE_HOSTS): none.
    "ARTIFACT_PAGE_HOSTS": [],
}


def agent_setting(name: str) -> Any:
    try:
        from django.conf import settings

        if settings.configured:
            return getattr(settings, name, DEFAULTS[name])
    except ImportError:  # pragma: no cover - Django is a dependency
        pass
    return DEFAULTS[name]
