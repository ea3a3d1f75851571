# ruff: noqa: E501  (embedded shell, JavaScript and markup read better unwrapped)
"""Every kind of artifact renders in a real browser, from the artifact origin."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from creations.models import Run
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import IMAGE_WIDTH, Web
from tests.support.media_samples import map_html_bytes, midi_bytes, mp4_bytes, pdf_bytes, png_bytes, wav_bytes

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_image"),  # previews are made in a preview sandbox
]

SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="240" height="120"><rect width="240" height="120" fill="#ffca28"/><circle cx="60" cy="60" r="40" fill="#3d5afe"/></svg>'
MARKDOWN = b"# Report\n\nSales went **up**.\n\n| Quarter | Sales |\n|---|---|\n| Q1 | 12 |\n| Q2 | 19 |\n\n![chart](poster.png)\n"
CODE = b'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n'

SEEK_VIDEO = """async (video) => {
  if (video.readyState < 1) await new Promise((ok) => video.addEventListener("loadedmetadata", ok, {once: true}));
  video.currentTime = 2.5;
  await new Promise((ok) => video.addEventListener("seeked", ok, {once: true}));
  return video.currentTime;
}"""
CAPTIONS = "WEBVTT\n\n00:00.000 --> 00:02.000\nThree\n\n00:02.000 --> 00:04.000\nTwo, one\n"
TRACK_CUES = """async (video) => {
  const track = video.textTracks[0];
  track.mode = "showing";
  const loaded = video.querySelector("track");
  if (loaded.readyState !== 2) await new Promise((ok) => loaded.addEventListener("load", ok, {once: true}));
  return Array.from(track.cues).map((cue) => cue.text);
}"""
PLAY_AUDIO = """async (audio) => {
  audio.muted = true;
  await audio.play();
  await new Promise((ok) => setTimeout(ok, 800));
  const position = audio.currentTime;
  audio.pause();
  return position;
}"""


def every_kind(team: Team) -> Run:
    outputs = [
        Output("poster.png", png_bytes(640, 400)),
        Output("logo.svg", SVG),
        Output("countdown.mp4", mp4_bytes(seconds=4)),
        Output("tone.wav", wav_bytes(seconds=2)),
        Output("piece.mid", midi_bytes()),
        Output("report.pdf", pdf_bytes(pages=3)),
        Output("map.html", map_html_bytes()),
        Output("report.md", MARKDOWN),
        Output("greet.py", CODE),
        Output("data.bin", bytes(range(256))),
    ]
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=outputs, previews=True,
                       brief="One of everything", title="One of everything")  # fmt: skip
    # What the agent's sidecars leave (checked at ingestion: tests/creations/artifacts/test_sidecars.py).
    run.artifacts.filter(path="poster.png").update(alt_text="A blue poster with nothing on it yet")
    run.artifacts.filter(path="countdown.mp4").update(captions_vtt=CAPTIONS)
    return run


def test_every_kind_of_artifact_renders(web: Web, team: Team) -> None:
    run = every_kind(team)
    artifacts = {a.path: a for a in run.artifacts.all()}
    page = web.page()
    statuses: dict[str, list[int]] = {}
    page.on("response", lambda r: statuses.setdefault(r.url.split("?")[0].rsplit("/", 1)[-1], []).append(r.status))
    web.sign_in(page, team.owner.username, PASSWORD)

    page.goto(web.platform + reverse("creation_detail", args=[run.creation_id]))
    page.wait_for_load_state("networkidle")
    web.shot(page, "creation-page")

    def open_artifact(path: str) -> None:
        page.goto(web.platform + reverse("artifact_detail", args=[artifacts[path].pk]))

    open_artifact("poster.png")
    assert page.locator("img.artifact-image").evaluate(IMAGE_WIDTH) == 640
    expect(page.get_by_role("img", name="A blue poster with nothing on it yet")).to_be_visible()
    web.shot(page, "renderer-image")

    open_artifact("logo.svg")
    assert page.locator("img.artifact-image").evaluate(IMAGE_WIDTH) == 240
    web.shot(page, "renderer-svg")

    open_artifact("countdown.mp4")
    assert page.locator("video").evaluate(SEEK_VIDEO) == pytest.approx(2.5, abs=0.2)
    assert 206 in statuses["countdown.mp4"], "the browser seeks with Range requests"
    assert page.locator("video").evaluate(TRACK_CUES) == ["Three", "Two, one"]  # captions, under the page's CSP
    web.shot(page, "renderer-video")

    open_artifact("tone.wav")
    assert page.locator("audio").evaluate(PLAY_AUDIO) > 0
    web.shot(page, "renderer-audio")

    open_artifact("piece.mid")
    assert page.locator("audio").evaluate(PLAY_AUDIO) > 0, "the MIDI's audio rendition plays"
    assert page.get_by_role("link", name="Download the .mid file").is_visible()
    web.shot(page, "renderer-midi")

    open_artifact("report.pdf")
    pages = page.locator("img.pdf-page")
    expect(pages).to_have_count(3)
    pages.last.scroll_into_view_if_needed()
    assert [pages.nth(n).evaluate(IMAGE_WIDTH) for n in range(3)] == [1237, 1237, 1237]  # 1,600 px tall
    expect(page.get_by_role("img", name="Page 3 of report.pdf")).to_be_visible()
    fitted = pages.first.bounding_box()["width"]  # type: ignore[index]
    page.get_by_role("button", name="Zoom in").click()
    expect(page.locator("[data-pdf-zoom-level]")).to_have_text("125%")
    assert pages.first.bounding_box()["width"] == pytest.approx(fitted * 1.25, abs=2)  # type: ignore[index]
    web.shot(page, "renderer-pdf")

    open_artifact("map.html")
    page.frame_locator("iframe.artifact-frame").locator("#map[data-ready=yes]").wait_for()
    page.wait_for_timeout(300)
    web.shot(page, "renderer-map")

    open_artifact("report.md")
    assert page.locator(".document.markdown table td", has_text="19").is_visible()
    assert page.locator(".document.markdown img").evaluate(IMAGE_WIDTH) == 640  # the run's own image
    web.shot(page, "renderer-markdown")

    open_artifact("greet.py")
    assert page.locator(".document .highlight .k", has_text="def").is_visible()
    web.shot(page, "renderer-code")

    open_artifact("data.bin")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download data.bin").click()
    assert download.value.suggested_filename == "data.bin"
    web.shot(page, "renderer-other")

    page.goto(web.platform + reverse("workspace_gallery", args=[team.workspace.slug]))
    assert page.locator(".gallery-grid .tile").count() == len(artifacts)
    assert page.locator(".gallery-grid img[alt='']").count() == 0
    expect(page.get_by_role("img", name="One of everything: countdown.mp4")).to_be_visible()
    page.wait_for_load_state("networkidle")
    web.shot(page, "gallery")
    page.get_by_label("Kind").select_option("video")
    expect(page.locator(".gallery-grid .tile")).to_have_count(1)
    assert "kind=video" in page.url
