"""What changed within a changed file, worked out in a gVisor preview sandbox with no network."""

import io
from typing import Any
from uuid import uuid4

import docker
import pytest
from django.core.files.storage import default_storage
from PIL import Image

from creations.compare.results import Detail, DetailState, Failed, LineDiff, MediaFacts, PixelDiff
from creations.compare.selectors import run_comparison
from creations.compare.services import comparison_compute
from sandboxes.container_spec import LABEL_HOST
from sandboxes.offline import LABEL_PURPOSE
from tests.support.artifacts import Output
from tests.support.comparisons import _comparisons_forgotten, poster_png, text_lines, two_versions  # noqa: F401
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import map_html_bytes, mp4_bytes, wav_bytes

pytestmark = [
    pytest.mark.docker,
    pytest.mark.django_db,
    pytest.mark.usefixtures("sandbox_image", "_comparisons_forgotten"),
]


def compared(team: Team, older: Output, newer: Output) -> Detail:
    """The detail of the one changed file of two versions, made in the sandbox and read back."""
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=[older], newer=[newer])
    comparison_compute(run_a_id=run_a.pk, run_b_id=run_b.pk)
    (changed,) = run_comparison(run_a=run_a, run_b=run_b, user=team.member).changed
    assert changed.detail_state == DetailState.READY
    assert changed.detail is not None
    return changed.detail


def test_a_changed_region_of_a_picture_is_measured_and_outlined(team: Team) -> None:
    patch = (100, 50, 149, 89)  # 50 x 40 pixels, inclusive
    detail = compared(team, Output("poster.png", poster_png()), Output("poster.png", poster_png(patch=patch)))
    pixels = detail.pixels
    assert isinstance(pixels, PixelDiff)
    assert pixels.changed_pixels == 50 * 40
    assert pixels.region == (100, 50, 150, 90)
    assert pixels.percent_changed == pytest.approx(100 * 2000 / (400 * 300))
    with default_storage.open(detail.overlay, "rb") as handle, Image.open(handle) as overlay:
        assert overlay.format == "PNG"
        assert overlay.size == (400, 300)
        rgb = overlay.convert("RGB")
        inside, outside = rgb.getpixel((125, 70)), rgb.getpixel((10, 10))
    assert inside != (255, 255, 255)  # the changed pixels are tinted
    assert outside == (61, 90, 254)  # the rest is the newer picture as it is


def test_an_identical_rendering_has_exactly_no_changed_pixels(team: Team) -> None:
    # Same pixels, other bytes (another compression level): a changed file, not one changed pixel.
    again = io.BytesIO()
    Image.open(io.BytesIO(poster_png())).save(again, format="PNG", compress_level=1)
    assert again.getvalue() != poster_png()
    detail = compared(team, Output("poster.png", poster_png()), Output("poster.png", again.getvalue()))
    pixels = detail.pixels
    assert isinstance(pixels, PixelDiff)
    assert pixels.changed_pixels == 0
    assert pixels.region is None
    assert pixels.percent_changed == 0.0


def test_a_changed_text_file_gets_a_line_diff(team: Team) -> None:
    detail = compared(
        team,
        Output("report.md", text_lines(200)),
        Output("report.md", text_lines(200, changed={120: "a <b>bolder</b> line"})),
    )
    lines = detail.lines
    assert isinstance(lines, LineDiff)
    assert (lines.added, lines.removed) == (1, 1)
    assert "-line 120 of the report" in lines.diff
    assert "+a <b>bolder</b> line" in lines.diff
    assert lines.diff.startswith("@@ -118,7 +118,7 @@")
    assert not lines.truncated


def test_audio_versions_get_their_durations_side_by_side(team: Team) -> None:
    detail = compared(team, Output("tone.wav", wav_bytes(seconds=1)), Output("tone.wav", wav_bytes(seconds=2)))
    assert detail.media is not None
    older, newer = detail.media.a, detail.media.b
    assert isinstance(older, MediaFacts)
    assert isinstance(newer, MediaFacts)
    assert (older.duration, newer.duration) == (1.0, 2.0)
    assert older.sample_rate == 22050


def test_details_are_made_once_in_a_sandbox_without_network(team: Team, settings: Any) -> None:
    # This test's sandboxes carry a host id of their own: another suite's comparisons are not ours to see.
    settings.SANDBOX_HOST_ID = f"compare-{uuid4().hex[:12]}"
    run_a, run_b = two_versions(
        workspace=team.workspace,
        author=team.owner,
        older=[Output("poster.png", poster_png())],
        newer=[Output("poster.png", poster_png(patch=(0, 0, 9, 9)))],
    )
    assert run_comparison(run_a=run_a, run_b=run_b, user=team.owner).pending
    assert comparison_compute(run_a_id=run_a.pk, run_b_id=run_b.pk) == 1
    assert comparison_compute(run_a_id=run_a.pk, run_b_id=run_b.pk) == 0  # kept: no second sandbox
    assert not run_comparison(run_a=run_a, run_b=run_b, user=team.owner).pending
    mine: dict[str, str | list[str] | bool] = {
        "label": [f"{LABEL_PURPOSE}=compare", f"{LABEL_HOST}={settings.SANDBOX_HOST_ID}"]
    }
    assert docker.from_env().containers.list(all=True, filters=mine) == []


def test_vector_images_are_drawn_before_their_pixels_are_compared(team: Team) -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><rect width="200" height="100" fill="{}"/>'
    older = (svg.format("#3d5afe") + '<rect x="10" y="10" width="20" height="20" fill="#fff"/></svg>').encode()
    newer = (svg.format("#3d5afe") + '<rect x="150" y="50" width="30" height="40" fill="#fff"/></svg>').encode()
    detail = compared(team, Output("logo.svg", older), Output("logo.svg", newer))
    pixels = detail.pixels
    assert isinstance(pixels, PixelDiff)
    assert (pixels.width_b, pixels.height_b) == (200, 100)
    assert pixels.changed_pixels == 20 * 20 + 30 * 40  # one square gone, one rectangle drawn
    assert pixels.region == (10, 10, 180, 90)
    assert isinstance(detail.lines, LineDiff)  # and its source, line by line
    assert detail.lines.added == detail.lines.removed == 1


def test_a_long_diff_is_cut_and_says_so_with_the_whole_counts(team: Team) -> None:
    older = b"".join(b"-- a line that starts like a diff header %d\n" % i for i in range(30_000))
    newer = b"".join(b"++ every line rewritten %d\n" % i for i in range(30_000))
    detail = compared(team, Output("notes.txt", older), Output("notes.txt", newer))
    lines = detail.lines
    assert isinstance(lines, LineDiff)
    assert lines.truncated
    assert (lines.added, lines.removed) == (30_000, 30_000)
    assert (lines.lines_a, lines.lines_b) == (30_000, 30_000)
    assert 200_000 < len(lines.diff.encode()) <= 256 * 1024


def test_videos_get_their_facts_side_by_side_and_their_poster_frames_compared(team: Team) -> None:
    run_a, run_b = two_versions(
        workspace=team.workspace,
        author=team.owner,
        older=[Output("clip.mp4", mp4_bytes(seconds=2))],
        newer=[Output("clip.mp4", mp4_bytes(seconds=3))],
        previews=True,  # the poster frames, made at ingestion
    )
    comparison_compute(run_a_id=run_a.pk, run_b_id=run_b.pk)
    (changed,) = run_comparison(run_a=run_a, run_b=run_b, user=team.member).changed
    assert changed.detail is not None
    media = changed.detail.media
    assert media is not None
    older, newer = media.a, media.b
    assert isinstance(older, MediaFacts)
    assert isinstance(newer, MediaFacts)
    assert (older.duration, newer.duration) == (2.0, 3.0)
    assert (older.width, older.height, newer.width, newer.height) == (320, 240, 320, 240)
    assert older.video_codec == "h264"
    pixels = changed.detail.pixels
    assert isinstance(pixels, PixelDiff)
    assert (pixels.width_b, pixels.height_b) == (320, 240)  # the poster frames' own size


def test_a_picture_no_decoder_reads_gets_a_reason_not_an_error(team: Team) -> None:
    broken = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\xff" * 200  # a PNG signature, then garbage
    detail = compared(team, Output("poster.png", poster_png()), Output("poster.png", broken))
    assert isinstance(detail.pixels, Failed)
    assert detail.pixels.error
    assert not detail.overlay


def test_a_map_gets_its_source_diff_and_its_screenshots_compared(team: Team) -> None:
    page = map_html_bytes()
    run_a, run_b = two_versions(
        workspace=team.workspace,
        author=team.owner,
        older=[Output("map.html", page)],
        newer=[Output("map.html", page.replace(b"</body>", b"<h1>Tokyo, day 2</h1></body>", 1))],
        previews=True,  # the screenshots, made at ingestion
    )
    comparison_compute(run_a_id=run_a.pk, run_b_id=run_b.pk)
    (changed,) = run_comparison(run_a=run_a, run_b=run_b, user=team.member).changed
    assert changed.detail is not None
    lines = changed.detail.lines
    assert isinstance(lines, LineDiff)
    assert next(line for line in lines.diff.splitlines() if "Tokyo, day 2" in line).startswith("+")
    pixels = changed.detail.pixels
    assert isinstance(pixels, PixelDiff)
    assert pixels.changed_pixels > 0  # the heading shows in the screenshot


def test_a_resized_picture_counts_what_only_one_version_covers(team: Team) -> None:
    detail = compared(team, Output("poster.png", poster_png(400, 300)), Output("poster.png", poster_png(400, 320)))
    pixels = detail.pixels
    assert isinstance(pixels, PixelDiff)
    assert pixels.resized
    assert pixels.total_pixels == 400 * 320
    assert pixels.changed_pixels >= 400 * 20  # the new strip at the bottom, and the ellipse drawn taller
    assert pixels.region is not None
    assert pixels.region[3] == 320
