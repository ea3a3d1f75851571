"""The demo model: bundled trajectories replayed, labelled as a replay."""

from __future__ import annotations

from typing import Any

from sandboxes.agent.demo.client import DEMO_MODEL_LABEL, DEMO_MODEL_NAME, DemoModelClient
from sandboxes.agent.demo.follow_ups import demo_follow_up_refusal, demo_follow_ups, recorded_follow_up
from sandboxes.agent.demo.trajectory import best_trajectory, showcase_trajectories


def demo_model_client(brief: str, *, instruction: str | None = None) -> DemoModelClient:
    """A demo client replaying the bundled trajectory that best matches `brief`;
    with `instruction`, that showcase's recorded follow-up of those words.

    Raises ValueError, with the sentence to show, for an instruction the demo
    has no recording of (`demo_follow_up_refusal` says so before anything is queued)."""
    trajectory = best_trajectory(brief)
    if instruction is None:
        return DemoModelClient(trajectory)
    follow_up = recorded_follow_up(brief, instruction)
    if follow_up is None:
        raise ValueError(demo_follow_up_refusal(brief, instruction))
    return DemoModelClient(trajectory, follow_up=follow_up)


def _showcase_briefs() -> list[dict[str, Any]]:
    briefs: list[dict[str, Any]] = []
    for trajectory in showcase_trajectories():
        entry: dict[str, Any] = {"kind": trajectory.kind, "title": trajectory.title, "brief": trajectory.brief}
        if trajectory.inputs:
            entry["inputs"] = dict(trajectory.inputs)
        briefs.append(entry)
    return briefs


SHOWCASE_BRIEFS: list[dict[str, Any]] = _showcase_briefs()

__all__ = [
    "DEMO_MODEL_LABEL",
    "DEMO_MODEL_NAME",
    "SHOWCASE_BRIEFS",
    "DemoModelClient",
    "demo_follow_up_refusal",
    "demo_follow_ups",
    "demo_model_client",
]
