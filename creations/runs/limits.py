"""A run's limits: what its workspace allows, and what a creation may ask for within that.

One source for the rule, used by the form (to show the ceilings), the
services (to check what is asked), forks (to fit a creation into another
workspace) and execution (the limits the agent gets).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError

from creations.models import Creation
from sandboxes.agent import AgentLimits
from workspaces.models import Workspace


@dataclass(frozen=True)
class RunCeilings:
    """The most one run of a workspace may use."""

    max_steps: int
    max_seconds: int
    max_tokens: int

    def as_dict(self) -> dict[str, int]:
        return {"max_steps": self.max_steps, "max_seconds": self.max_seconds, "max_tokens": self.max_tokens}


def run_ceilings(workspace: Workspace) -> RunCeilings:
    return RunCeilings(
        max_steps=workspace.run_max_steps,
        max_seconds=min(workspace.run_max_seconds, settings.RUN_MAX_SECONDS_CEILING),
        max_tokens=workspace.run_max_tokens,
    )


def clean_requested_limits(
    *, workspace: Workspace, max_steps: int | None, max_seconds: int | None, max_tokens: int | None
) -> dict[str, int | None]:
    """What a person asked for, checked against the ceilings (None: the workspace's limit)."""
    ceilings = run_ceilings(workspace).as_dict()
    asked = {"max_steps": max_steps, "max_seconds": max_seconds, "max_tokens": max_tokens}
    errors: dict[str, str] = {}
    for name, value in asked.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            errors[name] = "Give a whole number of at least 1, or leave it empty."
        elif value > ceilings[name]:
            errors[name] = f"This workspace allows at most {ceilings[name]}."
    if errors:
        raise ValidationError(errors)
    return asked


def fit_limits(creation: Creation, workspace: Workspace) -> dict[str, int | None]:
    """A creation's limits lowered to fit `workspace` (for a fork into it)."""
    ceilings = run_ceilings(workspace).as_dict()
    asked = {"max_steps": creation.max_steps, "max_seconds": creation.max_seconds, "max_tokens": creation.max_tokens}
    return {name: None if value is None else min(value, ceilings[name]) for name, value in asked.items()}


def effective_limits(creation: Creation) -> AgentLimits:
    """The limits a run of `creation` works under: what it asked for, within its workspace's ceilings."""
    ceilings = run_ceilings(creation.workspace)
    return AgentLimits(
        max_steps=min(creation.max_steps or ceilings.max_steps, ceilings.max_steps),
        max_tokens=min(creation.max_tokens or ceilings.max_tokens, ceilings.max_tokens),
        max_wall_seconds=float(min(creation.max_seconds or ceilings.max_seconds, ceilings.max_seconds)),
        command_timeout=float(settings.SANDBOX_COMMAND_TIMEOUT),
    )
