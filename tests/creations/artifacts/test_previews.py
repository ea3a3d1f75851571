"""Previews made at ingestion in a sandbox with no network: real tools on real files, bounded, never failing
the run."""

import threading
import time
from typing import Any
from uuid import uuid4

import docker
import pytest
from PIL import Image

from creations.artifacts.display import artifact_displays
from creations.models import Artifact
from sandboxes.container_spec import LABEL_HOST
from sandboxes.offline import LABEL_PURPOSE
from tests.support.artifacts import Output, add_artifact, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import (
    hostile_html,
    hostile_markdown,
    map_html_bytes,
    midi_bytes,
    mp4_bytes,
    pdf_bytes,
    png_bytes,
    wav_bytes,
)

pytestmark = [pytest.mark.docker, pytest.mark.django_db, pytest.mark.usefixtures("sandbox_image")]


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
    width, _ = preview_size(made(team, "clip.mp4", mp4_bytes(seconds=2)))
    assert width > 0


def test_audio_gets_a_waveform(team: Team) -> None:
    artifact = made(team, "tone.wav", wav_bytes(seconds=1))
    with artifact.preview.open("rb") as handle, Image.open(handle) as image:
        colors = {c for _, c in image.convert("RGB").getcolors(maxcolors=100_000) or []}
    assert (61, 90, 254) in colors  # the accent-coloured wave is drawn


def test_pdfs_get_their_first_page(team: Team) -> None:
    width, height = preview_size(made(team, "report.pdf", pdf_bytes()))
    assert height > width  # a portrait page


def test_midi_is_rendered_to_audio_that_browsers_play(team: Team) -> None:
    artifact = made(team, "tune.mid", midi_bytes())
    assert artifact.kind == "midi"
    assert artifact.rendition_content_type == "audio/ogg"
    with artifact.rendition.open("rb") as handle:
        assert handle.read(4) == b"OggS"
    assert artifact.preview
    # Both are kept beside the file, and counted in the workspace's storage.
    artifact.refresh_from_db()
    assert artifact.derived_bytes == artifact.rendition.size + artifact.preview.size > 0


def test_html_gets_a_screenshot_of_what_its_script_drew(team: Team) -> None:
    artifact = made(team, "map.html", map_html_bytes())
    with artifact.preview.open("rb") as handle, Image.open(handle) as image:
        rgb = image.convert("RGB")
        colors = {c for _, c in rgb.getcolors(maxcolors=1_000_000) or []}
    assert (207, 232, 243) in colors  # the map's background, so the page rendered


def test_html_screenshots_cannot_reach_the_network(team: Team) -> None:
    """The hostile page's beacon to a server we run never arrives: the preview sandbox has no network."""
    from tests.support.request_log import RequestLog

    with RequestLog() as log:
        artifact = made(team, "page.html", hostile_html(log.url))
    assert artifact.preview  # the page was rendered, and its requests went nowhere
    assert log.paths == []


def test_previews_are_drawn_in_a_gvisor_sandbox_without_network(team: Team, settings: Any) -> None:
    # This test's sandboxes carry a host id of their own: another suite's previews are not ours to see.
    settings.SANDBOX_HOST_ID = f"previews-{uuid4().hex[:12]}"
    mine: dict[str, str | list[str] | bool] = {
        "label": [f"{LABEL_PURPOSE}=preview", f"{LABEL_HOST}={settings.SANDBOX_HOST_ID}"]
    }
    seen: list[dict[str, Any]] = []
    stop = threading.Event()
    client = docker.from_env()

    def watch() -> None:
        while not stop.is_set() and not seen:
            for container in client.containers.list(filters=mine):
                seen.append(container.attrs["HostConfig"])
            stop.wait(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        made(team, "tone.wav", wav_bytes(seconds=1))
    finally:
        stop.set()
        watcher.join()
    assert seen, "no preview sandbox was seen"
    assert seen[0]["NetworkMode"] == "none"
    assert seen[0]["Runtime"] == settings.SANDBOX_RUNTIME == "runsc"
    assert seen[0]["ReadonlyRootfs"] is True
    assert client.containers.list(all=True, filters=mine) == []  # and it is gone


def test_garbage_gets_no_preview_and_no_error(team: Team) -> None:
    for name, data in (("clip.mp4", b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200), ("doc.pdf", b"%PDF-1.4 garbage")):
        artifact = made(team, name, data)
        assert not artifact.preview


def test_a_file_that_hangs_its_tool_costs_no_other_file_its_preview(team: Team, settings: Any) -> None:
    settings.PREVIEW_TIMEOUT = 3
    hanging = b"<!doctype html><html><body><script>while (true) {}</script></body></html>"
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=[])
    artifacts = [add_artifact(run, Output("a-hang.html", hanging)), add_artifact(run, Output("b.png", png_bytes()))]
    from creations.artifacts.previews import make_previews

    make_previews(artifacts, run_id=run.pk)
    hang, image = (Artifact.objects.get(pk=a.pk) for a in artifacts)
    assert not hang.preview
    assert preview_size(image) == (320, 200)


def test_markdown_is_rendered_once_at_ingestion_and_served_sanitized(team: Team, settings: Any) -> None:
    document = hostile_markdown("http://localhost:8000") + b"\n\n![chart](chart.png) [more](notes/more.md)\n"
    artifact = made(team, "reports/q1.md", document)
    assert artifact.rendered
    artifact.refresh_from_db()
    assert artifact.derived_bytes == artifact.rendered.size > 0
    (display,) = artifact_displays([artifact], user=team.owner, render_documents=True)
    html = str(display.rendered)
    assert "<h1" in html
    assert "<script" not in html.lower()
    assert "onerror" not in html.lower()
    assert "javascript:" not in html.lower()
    assert f"{settings.ARTIFACT_ORIGIN}/r/" in html  # the run's own file, by a signed artifact URL
    assert "reports/chart.png" in html
    assert "atelier-run-file" not in html


def test_code_is_highlighted_in_the_sandbox_and_escaped(team: Team) -> None:
    artifact = made(team, "hello.py", b'import os\nprint("<script>alert(1)</script>")\n')
    (display,) = artifact_displays([artifact], user=team.owner, render_documents=True)
    html = str(display.rendered)
    assert 'class="highlight"' in html
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_many_small_files_are_rendered_in_one_batch_by_one_previewer_start(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of many small text files: one batch, not one sandbox round trip per file (bench/previews.py
    times a thousand)."""
    from creations.artifacts import previews
    from sandboxes.docker_runtime import DockerSandbox

    run = finished_run(workspace=team.workspace, author=team.owner, outputs=[])
    artifacts = [add_artifact(run, Output(f"notes/n{i:03}.py", f"print({i})\n".encode())) for i in range(60)]
    previewer_starts = []
    exec_in_sandbox = DockerSandbox.exec

    def counted(self: DockerSandbox, argv: list[str], **kwargs: Any) -> tuple[int, bytes]:
        if previews.previewer_source() in argv:
            previewer_starts.append(argv)
        return exec_in_sandbox(self, argv, **kwargs)

    monkeypatch.setattr(DockerSandbox, "exec", counted)
    previews.make_previews(artifacts, run_id=run.pk)

    assert len(previewer_starts) == 1
    rendered = Artifact.objects.filter(run=run).exclude(rendered="").exclude(rendered__isnull=True)
    assert rendered.count() == 60
    (display,) = artifact_displays([rendered.get(path="notes/n042.py")], user=team.owner, render_documents=True)
    assert "42" in str(display.rendered)


def test_a_file_that_kills_the_previewer_costs_no_other_file_of_its_batch_its_preview(
    team: Team, settings: Any
) -> None:
    """32 KiB of "[" keep Python-Markdown busy for minutes: its alarm ends the process making it, and a
    fresh one goes on with the rest of the batch."""
    settings.PREVIEW_TIMEOUT = 2
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=[])
    artifacts = [
        add_artifact(run, Output("a-brackets.md", b"[" * 32768)),
        add_artifact(run, Output("b-notes.md", b"# Notes\n\nFine.\n")),
        add_artifact(run, Output("c.png", png_bytes())),
    ]
    from creations.artifacts.previews import make_previews

    make_previews(artifacts, run_id=run.pk)
    brackets, notes, image = (Artifact.objects.get(pk=a.pk) for a in artifacts)
    assert not brackets.rendered
    assert notes.rendered
    assert preview_size(image) == (320, 200)


def test_past_the_runs_time_for_previews_the_files_left_get_none(team: Team, settings: Any) -> None:
    settings.PREVIEW_TIMEOUT, settings.PREVIEW_RUN_SECONDS = 120, 10
    hanging = b"<!doctype html><html><body><script>while (true) {}</script></body></html>"
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=[])
    artifacts = [add_artifact(run, Output("a-hang.html", hanging)), add_artifact(run, Output("b.png", png_bytes()))]
    from creations.artifacts.previews import make_previews

    started = time.monotonic()
    make_previews(artifacts, run_id=run.pk)
    assert time.monotonic() - started < 90  # the hanging page alone may take 3 tools x 120 s
    assert not any(Artifact.objects.get(pk=a.pk).preview for a in artifacts)
