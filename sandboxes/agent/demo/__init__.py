"""The demo model: bundled trajectories replayed, labelled as a replay."""

from __future__ import annotations

from typing import Any

from sandboxes.agent.demo.client import DEMO_MODEL_LABEL, DEMO_MODEL_NAME, DemoModelClient
from sandboxes.agent.demo.trajectory import best_trajectory, showcase_trajectories


def demo_model_client(brief: str) -> DemoModelClient:
    """A demo client replaying the bundled trajectory that best matches `brief`."""
    return DemoModelClient(best_trajectory(brief))


def _showcase_briefs() -> list[dict[str, Any]]:
    briefs: list[dict[str, Any]] = []
    for trajectory in showcase_trajectories():
        entry: dict[str, Any] = {"kind": trajectory.kind, "title": trajectory.title, "brief": trajectory.brief}
        if trajectory.inputs:
            entry["inputs"] = dict(trajectory.inputs)
        briefs.append(entry)
    return briefs


SHOWCASE_BRIEFS: list[dict[str, Any]] = _showcase_briefs()

__all__ = ["DEMO_MODEL_LABEL", "DEMO_MODEL_NAME", "SHOWCASE_BRIEFS", "DemoModelClient", "demo_model_client"]
