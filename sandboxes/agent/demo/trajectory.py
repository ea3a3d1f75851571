"""Bundled demo trajectories: a model's choices recorded as data.

Each module in `trajectories/` defines TRAJECTORY, a dict with:
  kind, title, brief        shown as a starter brief in the web UI
  keywords                  words that make a brief match this trajectory
  inputs (optional)         {file name: text} the showcase brief attaches
  steps                     [{"text": assistant text,
                              "calls": [{"name": tool, "arguments": {...}}]}]
and may define FOLLOW_UPS, a list of {"instruction": what a person asks next,
"steps": as above}: recorded work on the files the showcase left in /testbed,
offered as suggestions when a person refines a demo creation.
The commands are not recorded results: they really run in the sandbox.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

TRAJECTORY_MODULES = ("map", "poster", "video", "music", "report")
FALLBACK_MODULE = "fallback"
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class DemoStep:
    text: str
    calls: tuple[tuple[str, dict[str, Any]], ...]


@dataclass(frozen=True)
class FollowUp:
    """A recorded second version: `instruction` is what the person asked, the
    steps work on what the showcase's own steps left in /testbed."""

    instruction: str
    steps: tuple[DemoStep, ...]


@dataclass(frozen=True)
class Trajectory:
    kind: str
    title: str
    brief: str
    keywords: frozenset[str]
    steps: tuple[DemoStep, ...]
    inputs: dict[str, bytes]
    follow_ups: tuple[FollowUp, ...] = ()


def _steps(recorded: list[dict[str, Any]]) -> tuple[DemoStep, ...]:
    return tuple(
        DemoStep(
            text=step.get("text", ""),
            calls=tuple((call["name"], dict(call["arguments"])) for call in step.get("calls", ())),
        )
        for step in recorded
    )


def _load(module_name: str) -> Trajectory:
    module = importlib.import_module(f"sandboxes.agent.demo.trajectories.{module_name}")
    data = module.TRAJECTORY
    inputs = {name: content.encode() for name, content in data.get("inputs", {}).items()}
    follow_ups = tuple(
        FollowUp(instruction=entry["instruction"], steps=_steps(entry["steps"]))
        for entry in getattr(module, "FOLLOW_UPS", ())
    )
    return Trajectory(
        kind=data["kind"],
        title=data["title"],
        brief=data["brief"],
        keywords=frozenset(data["keywords"]),
        steps=_steps(data["steps"]),
        inputs=inputs,
        follow_ups=follow_ups,
    )


@cache
def showcase_trajectories() -> tuple[Trajectory, ...]:
    return tuple(_load(name) for name in TRAJECTORY_MODULES)


@cache
def fallback_trajectory() -> Trajectory:
    return _load(FALLBACK_MODULE)


def best_trajectory(brief: str) -> Trajectory:
    """The showcase trajectory whose keywords the brief mentions most; the
    fallback (which explains what the demo can do) when none match."""
    words = set(_WORD.findall(brief.lower()))
    # Plural and simple suffix forms count too: "posters", "videos", "charts".
    words |= {word.rstrip("s") for word in words}
    scored = [(len(words & trajectory.keywords), trajectory) for trajectory in showcase_trajectories()]
    score, best = max(scored, key=lambda pair: pair[0])
    return best if score > 0 else fallback_trajectory()
