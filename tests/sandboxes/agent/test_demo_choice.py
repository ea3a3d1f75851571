"""The demo model is honest: a brief it has no recording for gets an explanation, not an unrelated creation."""

from __future__ import annotations

import pytest

from sandboxes.agent.demo import SHOWCASE_BRIEFS
from sandboxes.agent.demo.trajectory import best_trajectory


@pytest.mark.parametrize("brief", ["a sonnet about autumn leaves", "translate my CV into German", ""])
def test_a_brief_outside_the_showcase_gets_the_explanation(brief: str) -> None:
    chosen = best_trajectory(brief)
    assert chosen.kind == "other"
    summaries = [args.get("summary", "") for step in chosen.steps for name, args in step.calls if name == "submit"]
    assert any("only replays five showcase briefs" in summary for summary in summaries)
    assert any("choose a real model" in summary for summary in summaries)


@pytest.mark.parametrize("showcase", SHOWCASE_BRIEFS, ids=[b["kind"] for b in SHOWCASE_BRIEFS])
def test_each_showcase_brief_replays_its_own_recording(showcase: dict[str, object]) -> None:
    assert best_trajectory(str(showcase["brief"])).kind == showcase["kind"]
