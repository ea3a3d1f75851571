# ruff: noqa: E501  (embedded shell, JavaScript and markup read better unwrapped)
"""A person signs in, submits a brief, watches the steps stream in, and sees what was made.

Everything is real: the login form, the ASGI server, the Celery worker, the gVisor
sandbox running the commands, the websocket, and an OpenAI-compatible (scripted) model.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import Web
from tests.support.runs import scripted_endpoint, submit, wait_for_final

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

MAKE_EVERYTHING = r"""set -e
mkdir -p /testbed/output && cd /testbed/output
python3 - <<'PY'
from PIL import Image, ImageDraw
poster = Image.new("RGB", (600, 400), "#3d5afe")
ImageDraw.Draw(poster).ellipse((150, 100, 450, 300), fill="#ffca28")
poster.save("poster.png")
PY
ffmpeg -nostdin -v error -f lavfi -i testsrc=size=320x240:rate=24:duration=4 -pix_fmt yuv420p -c:v libx264 -preset ultrafast -movflags +faststart clip.mp4
ffmpeg -nostdin -v error -f lavfi -i "sine=frequency=440:duration=3" tune.wav
cat > map.html <<'HTML'
<!doctype html><html><head><meta charset="utf-8"><title>Map</title></head>
<body style="margin:0"><div id="map" style="height:320px;background:#cfe8f3" data-ready="no"></div>
<script>var m = document.getElementById("map"); m.textContent = "Tsukiji - Ginza - Asakusa"; m.setAttribute("data-ready", "yes");</script>
</body></html>
HTML
ls -la"""
SLOW_OUTPUT = "for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 1; done"

PLAY_AUDIO = """async (audio) => {
  audio.muted = true; await audio.play(); await new Promise((ok) => setTimeout(ok, 800));
  const position = audio.currentTime; audio.pause(); return position;
}"""
SEEK_VIDEO = """async (video) => {
  if (video.readyState < 1) await new Promise((ok) => video.addEventListener("loadedmetadata", ok, {once: true}));
  video.currentTime = 3;
  await new Promise((ok) => video.addEventListener("seeked", ok, {once: true}));
  return video.currentTime;
}"""


def test_a_person_submits_a_brief_watches_it_live_and_sees_the_artifacts(
    web: Web, team: Team, scripted_model: ScriptedModel, sandbox_image: str
) -> None:
    endpoint = scripted_endpoint(
        team,
        scripted_model,
        [
            bash(MAKE_EVERYTHING, "I will draw the poster, cut the clip, tune the tone and pin the map."),
            bash(SLOW_OUTPUT, "Now a slow check, line by line."),
            submit_reply("A poster, a clip, a tone and a map."),
        ],
    )
    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}/w/{team.workspace.slug}/")
    web.shot(page, "dashboard")

    page.get_by_role("link", name="New creation").first.click()
    expect(page.get_by_role("heading", name="New creation")).to_be_visible()
    web.shot(page, "new-creation")
    page.get_by_label("Brief", exact=True).fill("A poster, a short clip, a tone and a map of Tokyo food stops")
    page.get_by_label("Model", exact=True).select_option(label=f"{endpoint.name} ({endpoint.model})")
    page.get_by_role("button", name="Start").click()
    page.wait_for_url("**/runs/*/")

    # Steps stream in while the run is going: the slow command's first lines show before its last.
    trajectory = page.locator("[data-role=trajectory]")
    expect(trajectory.locator(".step")).not_to_have_count(0)
    output = trajectory.locator(".call pre", has_text="tick 1")
    output.wait_for(timeout=120_000)
    assert "tick 8" not in output.inner_text(), "the output arrived only at the end, not live"
    expect(page.locator("[data-role=status]")).to_have_text("Running")
    expect(trajectory.locator(".command", has_text="for i in 1 2 3")).to_be_visible()
    expect(trajectory.get_by_text("Now a slow check, line by line.")).to_be_visible()
    web.shot(page, "live-run")

    expect(page.locator("[data-role=status]")).to_have_text("Succeeded", timeout=120_000)
    artifacts = page.locator("[data-role=artifacts]")
    image = artifacts.locator("img.artifact-image")
    image.wait_for(state="attached")
    image.scroll_into_view_if_needed()  # artifact images load lazily
    assert (
        image.evaluate(
            "(img) => img.complete ? img.naturalWidth : new Promise((ok) => img.onload = () => ok(img.naturalWidth))"
        )
        == 600
    )
    artifacts.locator("video").scroll_into_view_if_needed()
    assert artifacts.locator("video").evaluate(SEEK_VIDEO) == pytest.approx(3, abs=0.2)
    assert artifacts.locator("audio").evaluate(PLAY_AUDIO) > 0
    artifacts.locator("iframe.artifact-frame").scroll_into_view_if_needed()
    page.frame_locator("iframe.artifact-frame").locator("#map[data-ready=yes]").wait_for()
    expect(page.locator("[data-role=tokens]")).not_to_have_text("0")
    web.shot(page, "run-finished")


def test_a_long_output_seen_live_links_to_its_whole_text(
    web: Web, team: Team, scripted_model: ScriptedModel, sandbox_image: str
) -> None:
    # What the model sees of this output (16,000 characters of Japanese) is too long to store inline.
    endpoint = scripted_endpoint(
        team,
        scripted_model,
        [bash("sleep 3; for i in $(seq 1 3000); do echo 東京の食べ物の地図、$i 行目; done"), submit_reply("Printed.")],
    )
    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    run = submit(team, endpoint)
    page.goto(f"{web.platform}/runs/{run.pk}/")
    assert page.locator("script[src*='run_page']").count() == 1, "the run ended before the live page opened"

    link = page.locator("a", has_text="Show the whole output")
    call = page.locator("[data-role=trajectory] .call", has=link)
    whole = call.locator(link)
    whole.wait_for(state="attached", timeout=120_000)
    # The output folds away when the next call starts; once the stream has ended it stays as it is.
    expect(page.locator("[data-role=connection]")).to_have_text("finished", timeout=120_000)
    if not whole.is_visible():
        call.locator("summary").click()
    expect(whole).to_be_visible()
    assert "KB)" in whole.inner_text()
    response = page.request.get(web.platform + (whole.get_attribute("href") or ""))
    assert response.ok
    assert response.headers["content-type"].startswith("text/plain")
    assert "東京の食べ物の地図、3000 行目" in response.text()
    # Let the run end before the test's tables are emptied: a worker still writing then deadlocks the flush.
    wait_for_final(run)
