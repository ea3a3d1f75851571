"""Each showcase's recorded follow-up really runs on what its first version
left in /testbed, and changes the deliverable the way its instruction says.

The follow-up runs in the sandbox the first version ran in: it stands in for
the second version's sandbox, which starts with the first one's /testbed."""

from __future__ import annotations

import json
import re
import subprocess
import wave
from pathlib import Path
from typing import Any

import mido
import pytest

from sandboxes.agent import SHOWCASE_BRIEFS, AgentLimits, demo_follow_ups, demo_model_client, run_agent
from sandboxes.agent.events import AGENT_EVENT_PAYLOADS
from tests.support import has_executable, require
from tests.support.agent import Recorder
from tests.support.media_samples import probe_media

# Generous: each test renders its showcase twice under gVisor, which is slow on a busy machine.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]


def _replay(sandbox: Any, brief: str, *, instruction: str | None, input_files: list[str]) -> Recorder:
    recorder = Recorder()
    outcome = run_agent(
        sandbox=sandbox,
        model=demo_model_client(brief, instruction=instruction),
        brief=instruction or brief,
        limits=AgentLimits(max_steps=20, command_timeout=300),
        emit=recorder,
        input_files=input_files,
    )
    assert outcome.reason == "submitted", recorder.of("tool_result")
    assert not [r for r in recorder.of("tool_result") if r["is_error"]], recorder.of("tool_result")
    for event in recorder.events:
        AGENT_EVENT_PAYLOADS[event.kind].model_validate(event.payload.model_dump())
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


def _is_dark_blue(rgb: tuple[int, ...] | float | None) -> bool:
    assert isinstance(rgb, tuple), rgb
    red, green, blue = rgb[:3]
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


def _tempos_and_programs(path: Path) -> tuple[set[float], set[int]]:
    midi = mido.MidiFile(str(path))
    messages = [message for track in midi.tracks for message in track]
    tempos = {round(mido.tempo2bpm(m.tempo)) for m in messages if m.type == "set_tempo"}
    return tempos, {m.program for m in messages if m.type == "program_change"}


def _seconds(path: Path) -> float:
    with wave.open(str(path)) as audio:
        return audio.getnframes() / audio.getframerate()


def test_the_music_follow_up_plays_it_slower_on_strings(sandbox: Any, tmp_path: Path) -> None:
    v1, v2 = _first_version_then_follow_up("music", sandbox, tmp_path)

    (tempo_before,), programs_before = _tempos_and_programs(v1 / "evening-in-a-minor.mid")
    (tempo_after,), programs_after = _tempos_and_programs(v2 / "evening-in-a-minor.mid")
    assert tempo_after < tempo_before
    assert programs_before == {0}  # acoustic grand piano
    assert programs_after
    assert all(40 <= program <= 51 for program in programs_after)  # General MIDI's strings and ensembles
    midi_before, midi_after = (mido.MidiFile(str(v / "evening-in-a-minor.mid")) for v in (v1, v2))
    assert midi_after.length > midi_before.length
    assert _seconds(v2 / "evening-in-a-minor.wav") > _seconds(v1 / "evening-in-a-minor.wav") + 2


def _frame(video: Path, seconds: float) -> Any:
    from PIL import Image

    require(has_executable("ffmpeg"), "ffmpeg on the host")
    still = video.with_name(f"{video.stem}-{seconds}.png")
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-ss", str(seconds), "-i", str(video), "-frames:v", "1", str(still)],
        check=True,
    )
    return Image.open(still).convert("RGB")


def _gold_pixels(image: Any) -> int:
    """Pixels near the gold #ffd166 in the middle of the frame, where the greeting is."""
    data = image.crop((240, 220, 1040, 520)).tobytes()
    pixels = zip(data[0::3], data[1::3], data[2::3], strict=True)
    return sum(1 for r, g, b in pixels if r > 230 and abs(g - 209) < 20 and abs(b - 102) < 25)


def test_the_video_follow_up_turns_the_greeting_gold_on_dark_blue(sandbox: Any, tmp_path: Path) -> None:
    v1, v2 = _first_version_then_follow_up("video", sandbox, tmp_path)

    probe = probe_media(v2 / "birthday-countdown.mp4")
    video = next(s for s in probe["streams"] if s["codec_type"] == "video")
    assert (video["width"], video["height"]) == (1280, 720)
    assert float(probe["format"]["duration"]) == pytest.approx(12.0, abs=0.2)
    before, after = _frame(v1 / "birthday-countdown.mp4", 11.5), _frame(v2 / "birthday-countdown.mp4", 11.5)
    assert not _is_dark_blue(before.getpixel((4, 4)))
    assert _is_dark_blue(after.getpixel((4, 4))), after.getpixel((4, 4))
    # Yellow confetti falls in front of both greetings; only the new one's letters are gold.
    assert _gold_pixels(after) > max(20_000, 10 * _gold_pixels(before))
    # The countdown before the greeting looks as it did.
    countdown_before, countdown_after = (_frame(v / "birthday-countdown.mp4", 2.5) for v in (v1, v2))
    assert countdown_before.getpixel((4, 4)) == pytest.approx(countdown_after.getpixel((4, 4)), abs=6)


def _constant(html: str, name: str) -> Any:
    found = re.search(rf"const {name} = (.*?);\n", html, re.S)
    return json.loads(found.group(1)) if found else None


def test_the_map_follow_up_adds_the_hotel_as_a_layer_of_its_own(sandbox: Any, tmp_path: Path) -> None:
    v1, v2 = _first_version_then_follow_up("map", sandbox, tmp_path)

    before, after = (v1 / "tokyo-food-map.html").read_text(), (v2 / "tokyo-food-map.html").read_text()
    assert _constant(before, "HOTEL") is None
    hotel = _constant(after, "HOTEL")
    assert (hotel["lat"], hotel["lon"]) == pytest.approx((35.681, 139.767), abs=0.003)  # Tokyo Station
    assert 'overlays["Our hotel"] = hotelLayer' in after
    assert "L.marker([HOTEL.lat, HOTEL.lon]" in after
    assert _constant(after, "STOPS") == _constant(before, "STOPS")
    assert not re.search(r"<script[^>]+src=", after, re.I), "loads an outside script"
    assert not re.search(r"<link[^>]+href=", after, re.I), "loads an outside stylesheet"
    require(has_executable("node"), "node on the host")
    page_script = tmp_path / "page.js"
    page_script.write_text(re.findall(r"<script>(.*?)</script>", after, re.S)[-1])  # the page's own, after Leaflet
    checked = subprocess.run(["node", "--check", str(page_script)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def _pdf_text(path: Path) -> str:
    require(has_executable("pdftotext"), "pdftotext (poppler-utils) on the host")
    return subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout


def _pdf_images(path: Path) -> int:
    listing = subprocess.run(["pdfimages", "-list", str(path)], capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in listing.splitlines()[2:]]  # under two header lines
    return sum(1 for row in rows if row[2] == "image")  # not counting "smask" rows: a chart's transparency


def test_the_report_follow_up_adds_a_best_sellers_section_with_a_chart(sandbox: Any, tmp_path: Path) -> None:
    v1, v2 = _first_version_then_follow_up("report", sandbox, tmp_path)

    before, after = _pdf_text(v1 / "bakery-year-report.pdf"), _pdf_text(v2 / "bakery-year-report.pdf")
    assert "Best sellers" not in before
    section = after[after.index("Best sellers") :]
    assert "cinnamon roll" in section  # the product that led the months with the most revenue
    assert "About the data" in section  # the new section comes before the closing note
    assert "Month by month" in after
    assert _pdf_images(v2 / "bakery-year-report.pdf") == _pdf_images(v1 / "bakery-year-report.pdf") + 1
    assert (v2 / "best-sellers-chart.png").stat().st_size > 10_000
