"""Previews made at ingestion: real tools on real files, bounded, never failing the run."""

from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from creations.models import Artifact
from tests.support import has_executable, require
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import (
    hostile_html,
    map_html_bytes,
    midi_bytes,
    mp4_bytes,
    pdf_bytes,
    png_bytes,
    wav_bytes,
)

pytestmark = pytest.mark.django_db


def made(team: Team, path: str, data: bytes) -> Artifact:
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=[Output(path, data)], previews=True)
    return run.artifacts.get()


def preview_size(artifact: Artifact) -> tuple[int, int]:
    assert artifact.preview, f"no preview for {artifact.kind}"
    with artifact.preview.open("rb") as handle, Image.open(handle) as image:
        assert image.format == "PNG"
        return image.size


def test_images_get_a_thumbnail_no_wider_than_the_gallery(team: Team, settings: Any) -> None:
    settings.PREVIEW_WIDTH = 200
    width, height = preview_size(made(team, "big.png", png_bytes(1000, 500)))
    assert (width, height) == (200, 100)


def test_videos_get_a_poster_frame(team: Team) -> None:
    require(has_executable("ffmpeg"), "ffmpeg is not installed")
    width, _ = preview_size(made(team, "clip.mp4", mp4_bytes(seconds=2)))
    assert width > 0


def test_audio_gets_a_waveform(team: Team) -> None:
    require(has_executable("ffmpeg"), "ffmpeg is not installed")
    artifact = made(team, "tone.wav", wav_bytes(seconds=1))
    with artifact.preview.open("rb") as handle, Image.open(handle) as image:
        colors = {c for _, c in image.convert("RGB").getcolors(maxcolors=100_000) or []}
    assert (61, 90, 254) in colors  # the accent-coloured wave is drawn


def test_pdfs_get_their_first_page(team: Team) -> None:
    require(has_executable("pdftoppm"), "poppler-utils (pdftoppm) is not installed")
    width, height = preview_size(made(team, "report.pdf", pdf_bytes()))
    assert height > width  # a portrait page


def test_midi_is_rendered_to_audio_that_browsers_play(team: Team) -> None:
    require(has_executable("fluidsynth") and has_executable("ffmpeg"), "fluidsynth/ffmpeg are not installed")
    artifact = made(team, "tune.mid", midi_bytes())
    assert artifact.kind == "midi"
    assert artifact.rendition_content_type == "audio/ogg"
    with artifact.rendition.open("rb") as handle:
        assert handle.read(4) == b"OggS"
    assert artifact.preview


def test_html_gets_a_screenshot_of_what_its_script_drew(team: Team) -> None:
    require(has_executable("chromium"), "chromium is not installed")
    artifact = made(team, "map.html", map_html_bytes())
    with artifact.preview.open("rb") as handle, Image.open(handle) as image:
        rgb = image.convert("RGB")
        colors = {c for _, c in rgb.getcolors(maxcolors=1_000_000) or []}
    assert (207, 232, 243) in colors  # the map's background, so the page rendered


def test_html_screenshots_cannot_reach_the_network(team: Team) -> None:
    """The hostile page's beacon to a server we run never arrives: the proxy refuses everything."""
    require(has_executable("chromium"), "chromium is not installed")
    from tests.support.request_log import RequestLog

    with RequestLog() as log:
        made(team, "page.html", hostile_html(log.url))
    assert log.paths == []


def test_garbage_gets_no_preview_and_no_error(team: Team) -> None:
    for name, data in (("clip.mp4", b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200), ("doc.pdf", b"%PDF-1.4 garbage")):
        artifact = made(team, name, data)
        assert not artifact.preview


def test_a_tool_that_runs_too_long_is_stopped(team: Team, settings: Any) -> None:
    require(has_executable("ffmpeg"), "ffmpeg is not installed")
    from creations.artifacts.preview_tools import PreviewToolError, run_tool

    settings.PREVIEW_TIMEOUT = 1
    with pytest.raises(PreviewToolError, match="longer than"):
        run_tool(["sleep", "30"], cwd=Path("/"))
