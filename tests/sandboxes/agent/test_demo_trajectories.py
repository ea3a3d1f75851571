"""Each bundled demo trajectory really runs in the sandbox and its files check
out the way a person would check them."""

from __future__ import annotations

import json
import re
import subprocess
import wave
from pathlib import Path
from typing import Any

import mido
import pytest

from sandboxes.agent import SHOWCASE_BRIEFS, AgentLimits, demo_model_client, run_agent
from sandboxes.agent.events import AGENT_EVENT_PAYLOADS
from tests.support import has_executable, require
from tests.support.agent import Recorder
from tests.support.media_samples import probe_media

pytestmark = pytest.mark.timeout(240)


def _make(kind: str, sandbox: Any, tmp_path: Path) -> tuple[Path, Recorder]:
    showcase = next(entry for entry in SHOWCASE_BRIEFS if entry["kind"] == kind)
    if showcase.get("inputs"):
        sandbox.write_files(showcase["inputs"])
    recorder = Recorder()
    outcome = run_agent(
        sandbox=sandbox,
        model=demo_model_client(showcase["brief"]),
        brief=showcase["brief"],
        limits=AgentLimits(max_steps=20, command_timeout=120),
        emit=recorder,
        input_files=list(showcase.get("inputs", {})),
    )
    assert outcome.reason == "submitted", recorder.of("tool_result")
    assert not [r for r in recorder.of("tool_result") if r["is_error"]], recorder.of("tool_result")
    for event in recorder.events:  # every event holds to its kind's schema (undeclared fields, types)
        AGENT_EVENT_PAYLOADS[event.kind].model_validate(event.payload.model_dump())
    report = sandbox.copy_out(tmp_path / "out")
    assert not report.rejected
    return tmp_path / "out", recorder


def test_the_map_is_one_offline_html_file_with_three_routes(sandbox: Any, tmp_path: Path) -> None:
    out, _ = _make("map", sandbox, tmp_path)

    html = (out / "tokyo-food-map.html").read_text()
    assert not re.search(r"<script[^>]+src=", html, re.I), "loads an outside script"
    assert not re.search(r"<link[^>]+href=", html, re.I), "loads an outside stylesheet"
    assert "L.map" in html
    assert "Leaflet" in html  # Leaflet itself is inlined
    stops = json.loads(re.search(r"const STOPS = (\[.*?\]);\n", html, re.S).group(1))  # type: ignore[union-attr]
    assert {stop["day"] for stop in stops} == {1, 2, 3}
    assert all(stop["time"] and stop["tip"] and stop["food"] for stop in stops)
    assert html.count("L.polyline(") == 1  # one polyline call, made once per day in the loop over DAYS
    assert len(json.loads(re.search(r"const DAYS = (\{.*?\});\n", html, re.S).group(1))) == 3  # type: ignore[union-attr]


def test_the_poster_comes_as_svg_a_1920_px_png_and_two_social_images(sandbox: Any, tmp_path: Path) -> None:
    from PIL import Image

    out, _ = _make("poster", sandbox, tmp_path)

    svg = (out / "poster.svg").read_text()
    assert all(word in svg for word in ("Northwind", "DevConf", "2026", "Harbour Hall", "Ada Okafor"))
    assert Image.open(out / "poster.png").size[1] == 1920
    assert Image.open(out / "social-square.png").size == (1080, 1080)
    width, height = Image.open(out / "social-wide.png").size
    assert width > height


def test_the_countdown_video_is_12_seconds_of_1280x720(sandbox: Any, tmp_path: Path) -> None:
    out, _ = _make("video", sandbox, tmp_path)

    probe = probe_media(out / "birthday-countdown.mp4")
    video = next(s for s in probe["streams"] if s["codec_type"] == "video")
    assert (video["width"], video["height"]) == (1280, 720)
    assert float(probe["format"]["duration"]) == pytest.approx(12.0, abs=0.2)


def test_the_piano_piece_is_20_to_30_seconds_of_midi_and_wav(sandbox: Any, tmp_path: Path) -> None:
    out, _ = _make("music", sandbox, tmp_path)

    midi_length = mido.MidiFile(str(out / "evening-in-a-minor.mid")).length
    assert 20 <= midi_length <= 30
    with wave.open(str(out / "evening-in-a-minor.wav")) as audio:
        seconds = audio.getnframes() / audio.getframerate()
    assert 20 <= seconds <= 30
    assert audio.getnchannels() == 2


def test_the_report_is_a_two_page_pdf_with_a_chart(sandbox: Any, tmp_path: Path) -> None:
    require(has_executable("pdfinfo"), "pdfinfo (poppler-utils) on the host")
    out, _ = _make("report", sandbox, tmp_path)

    info = subprocess.run(
        ["pdfinfo", str(out / "bakery-year-report.pdf")], capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"^Pages:\s+2$", info, re.M)
    images = subprocess.run(
        ["pdfimages", "-list", str(out / "bakery-year-report.pdf")], capture_output=True, text=True, check=True
    ).stdout
    assert len(images.strip().splitlines()) >= 3  # header lines + the chart
    assert (out / "revenue-chart.png").stat().st_size > 10_000
