"""Each bundled showcase really runs in the sandbox: its first version's files check out the way a
person would check them, and its recorded follow-up, run on what the first version left in
/testbed, changes the deliverable the way its instruction says.

Each showcase's first version is replayed once for both: its files are copied out as it ends, and
the follow-up runs in the sandbox the first version ran in (it stands in for the second version's
sandbox, which starts with the first one's /testbed)."""

from __future__ import annotations

import json
import re
import subprocess
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mido
import pytest

from sandboxes.agent import SHOWCASE_BRIEFS, AgentLimits, demo_follow_ups, demo_model_client, run_agent
from sandboxes.agent.events import AGENT_EVENT_PAYLOADS
from tests.support import has_executable, require
from tests.support.agent import Recorder
from tests.support.fixtures.sandbox import TEST_LABELS
from tests.support.media_samples import probe_media

if TYPE_CHECKING:
    from sandboxes.docker_runtime import DockerSandbox
    from sandboxes.pool import ColdStartProvider

# Generous: a showcase renders under gVisor, twice with its follow-up, which is slow on a busy machine.
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
    for event in recorder.events:  # every event holds to its kind's schema (undeclared fields, types)
        AGENT_EVENT_PAYLOADS[event.kind].model_validate(event.payload.model_dump())
    return recorder


@dataclass
class FirstVersion:
    brief: str
    sandbox: DockerSandbox  # as the first version left it, until its follow-up runs
    files: Path  # what it left in /testbed/output, copied out as it ended


FirstVersions = Callable[[str], FirstVersion]  # a kind's, replayed the first time it is asked for


@pytest.fixture(scope="module")
def first_version(
    sandbox_provider: ColdStartProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FirstVersions]:
    """The showcase of a kind, replayed once in a sandbox of its own for this module's tests."""
    from sandboxes.docker_runtime import DockerSandbox

    made: dict[str, FirstVersion] = {}
    failed: dict[str, str] = {}
    started: list[DockerSandbox] = []

    def of(kind: str) -> FirstVersion:
        if kind in failed:
            pytest.fail(f"the {kind} showcase's first version failed in an earlier test: {failed[kind]}")
        if kind not in made:
            showcase = next(entry for entry in SHOWCASE_BRIEFS if entry["kind"] == kind)
            sandbox = sandbox_provider.acquire(labels=TEST_LABELS)
            assert isinstance(sandbox, DockerSandbox)
            started.append(sandbox)
            files = tmp_path_factory.mktemp(f"{kind}-v1")
            try:
                inputs = showcase.get("inputs", {})
                if inputs:
                    sandbox.write_files(inputs)
                _replay(sandbox, showcase["brief"], instruction=None, input_files=list(inputs))
                assert not sandbox.copy_out(files).rejected
            except Exception as error:
                failed[kind] = f"{type(error).__name__}: {error}"[:2000]
                raise
            made[kind] = FirstVersion(showcase["brief"], sandbox, files)
        return made[kind]

    try:
        yield of
    finally:
        for sandbox in started:
            sandbox_provider.release(sandbox)


def _follow_up(kind: str, first_version: FirstVersions, tmp_path: Path) -> tuple[Path, Path]:
    """The showcase's files, then the same files after its recorded follow-up."""
    v1 = first_version(kind)
    [instruction] = demo_follow_ups(v1.brief)
    recorder = _replay(v1.sandbox, v1.brief, instruction=instruction, input_files=[])
    first_call = recorder.of("tool_call")[0]
    assert first_call["name"] == "execute_bash"
    assert re.match(r"ls\b.*/testbed", first_call["arguments"]["command"]), "starts by looking at what v1 left"
    assert recorder.of("tool_call")[-1]["name"] == "submit"
    assert not v1.sandbox.copy_out(tmp_path / "v2").rejected
    return v1.files, tmp_path / "v2"


def test_the_map_is_one_offline_html_file_with_three_routes(first_version: FirstVersions) -> None:
    out = first_version("map").files

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


def test_the_poster_comes_as_svg_a_1920_px_png_and_two_social_images(first_version: FirstVersions) -> None:
    from PIL import Image

    out = first_version("poster").files

    svg = (out / "poster.svg").read_text()
    assert all(word in svg for word in ("Northwind", "DevConf", "2026", "Harbour Hall", "Ada Okafor"))
    assert Image.open(out / "poster.png").size[1] == 1920
    assert Image.open(out / "social-square.png").size == (1080, 1080)
    width, height = Image.open(out / "social-wide.png").size
    assert width > height


def test_the_countdown_video_is_12_seconds_of_1280x720(first_version: FirstVersions) -> None:
    out = first_version("video").files

    probe = probe_media(out / "birthday-countdown.mp4")
    video = next(s for s in probe["streams"] if s["codec_type"] == "video")
    assert (video["width"], video["height"]) == (1280, 720)
    assert float(probe["format"]["duration"]) == pytest.approx(12.0, abs=0.2)


def test_the_piano_piece_is_20_to_30_seconds_of_midi_and_wav(first_version: FirstVersions) -> None:
    out = first_version("music").files

    midi_length = mido.MidiFile(str(out / "evening-in-a-minor.mid")).length
    assert 20 <= midi_length <= 30
    with wave.open(str(out / "evening-in-a-minor.wav")) as audio:
        seconds = audio.getnframes() / audio.getframerate()
    assert 20 <= seconds <= 30
    assert audio.getnchannels() == 2


def test_the_report_is_a_two_page_pdf_with_a_chart(first_version: FirstVersions) -> None:
    require(has_executable("pdfinfo"), "pdfinfo (poppler-utils) on the host")
    out = first_version("report").files

    info = subprocess.run(
        ["pdfinfo", str(out / "bakery-year-report.pdf")], capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"^Pages:\s+2$", info, re.M)
    images = subprocess.run(
        ["pdfimages", "-list", str(out / "bakery-year-report.pdf")], capture_output=True, text=True, check=True
    ).stdout
    assert len(images.strip().splitlines()) >= 3  # header lines + the chart
    assert (out / "revenue-chart.png").stat().st_size > 10_000


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


def test_the_poster_follow_up_makes_the_title_bigger_on_dark_blue(first_version: FirstVersions, tmp_path: Path) -> None:
    from PIL import Image

    v1, v2 = _follow_up("poster", first_version, tmp_path)

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


def test_the_music_follow_up_plays_it_slower_on_strings(first_version: FirstVersions, tmp_path: Path) -> None:
    v1, v2 = _follow_up("music", first_version, tmp_path)

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


def test_the_video_follow_up_turns_the_greeting_gold_on_dark_blue(first_version: FirstVersions, tmp_path: Path) -> None:
    v1, v2 = _follow_up("video", first_version, tmp_path)

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


def test_the_map_follow_up_adds_the_hotel_as_a_layer_of_its_own(first_version: FirstVersions, tmp_path: Path) -> None:
    v1, v2 = _follow_up("map", first_version, tmp_path)

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


def test_the_report_follow_up_adds_a_best_sellers_section_with_a_chart(
    first_version: FirstVersions, tmp_path: Path
) -> None:
    v1, v2 = _follow_up("report", first_version, tmp_path)

    before, after = _pdf_text(v1 / "bakery-year-report.pdf"), _pdf_text(v2 / "bakery-year-report.pdf")
    assert "Best sellers" not in before
    section = after[after.index("Best sellers") :]
    assert "cinnamon roll" in section  # the product that led the months with the most revenue
    assert "About the data" in section  # the new section comes before the closing note
    assert "Month by month" in after
    assert _pdf_images(v2 / "bakery-year-report.pdf") == _pdf_images(v1 / "bakery-year-report.pdf") + 1
    assert (v2 / "best-sellers-chart.png").stat().st_size > 10_000
