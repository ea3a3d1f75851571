"""Each showcase's recorded follow-up really runs on what its first version
left in /testbed, and changes the deliverable the way its instruction says.

The follow-up runs in the sandbox the first version ran in: it stands in for
the second version's sandbox, which starts with the first one's /testbed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from sandboxes.agent import SHOWCASE_BRIEFS, AgentLimits, demo_follow_ups, demo_model_client, run_agent
from sandboxes.agent.events import AGENT_EVENT_PAYLOADS
from tests.support.agent import Recorder

pytestmark = [pytest.mark.docker, pytest.mark.timeout(360)]


def _replay(sandbox: Any, brief: str, *, instruction: str | None, input_files: list[str]) -> Recorder:
    recorder = Recorder()
    outcome = run_agent(
        sandbox=sandbox,
        model=demo_model_client(brief, instruction=instruction),
        brief=instruction or brief,
        limits=AgentLimits(max_steps=20, command_timeout=120),
        emit=recorder,
        input_files=input_files,
    )
    assert outcome.reason == "submitted", recorder.of("tool_result")
    assert not [r for r in recorder.of("tool_result") if r["is_error"]], recorder.of("tool_result")
    for event in recorder.events:
        AGENT_EVENT_PAYLOADS[event.kind].model_validate(event.payload)
    return recorder


def _first_version_then_follow_up(kind: str, sandbox: Any, tmp_path: Path) -> tuple[Path, Path]:
    """The showcase's files, then the same files after its recorded follow-up."""
    showcase = next(entry for entry in SHOWCASE_BRIEFS if entry["kind"] == kind)
    inputs = showcase.get("inputs", {})
    if inputs:
        sandbox.write_files(inputs)
    _replay(sandbox, showcase["brief"], instruction=None, input_files=list(inputs))
    assert not sandbox.copy_out(tmp_path / "v1").rejected

    [instruction] = demo_follow_ups(showcase["brief"])
    recorder = _replay(sandbox, showcase["brief"], instruction=instruction, input_files=[])
    first_call = recorder.of("tool_call")[0]
    assert first_call["name"] == "execute_bash"
    assert re.match(r"ls\b.*/testbed", first_call["arguments"]["command"]), "starts by looking at what v1 left"
    assert recorder.of("tool_call")[-1]["name"] == "submit"
    assert not sandbox.copy_out(tmp_path / "v2").rejected
    return tmp_path / "v1", tmp_path / "v2"


def _title_size(svg: str) -> float:
    return max(float(size) for size in re.findall(r'font-size="([\d.]+)"[^>]*>(?:Northwind|DevConf)', svg))


def _background(svg: str) -> tuple[int, int, int]:
    fill = re.search(r'<svg[^>]*><rect width="\d+" height="\d+" fill="#([0-9a-f]{6})"', svg)
    assert fill, "the poster starts with a background rectangle"
    value = fill.group(1)
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def _is_dark_blue(rgb: tuple[int, int, int]) -> bool:
    red, green, blue = rgb
    return blue >= max(red, green) + 40 and (red + green + blue) / 3 < 100


def test_the_poster_follow_up_makes_the_title_bigger_on_dark_blue(sandbox: Any, tmp_path: Path) -> None:
    from PIL import Image

    v1, v2 = _first_version_then_follow_up("poster", sandbox, tmp_path)

    before, after = (v1 / "poster.svg").read_text(), (v2 / "poster.svg").read_text()
    assert _title_size(after) > _title_size(before)
    assert not _is_dark_blue(_background(before))
    assert _is_dark_blue(_background(after))
    assert Image.open(v2 / "poster.png").size[1] == 1920
    for name in ("poster.png", "social-square.png", "social-wide.png"):
        corner = Image.open(v2 / name).convert("RGB").getpixel((2, 2))
        assert _is_dark_blue(corner), (name, corner)
