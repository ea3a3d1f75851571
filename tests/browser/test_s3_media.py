# ruff: noqa: E501  (embedded markup reads better unwrapped)
"""With artifacts in S3 (a real S3-compatible server, SeaweedFS) and media redirected to the
store, a real browser shows and plays them: the pages' and the artifact pages' CSPs let the
redirected loads through, and an artifact page still cannot load anything else of the store."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import pytest
from django.urls import reverse

from devstack.s3 import BUCKET, S3Server, storage_env
from devstack.stack import AtelierServer
from tests.browser.test_renderers import SEEK_VIDEO
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import IMAGE_WIDTH, Web
from tests.support.fixtures.s3 import use_s3_storage
from tests.support.media_samples import mp4_bytes, png_bytes

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def web_on_s3(
    browser: Browser,
    s3_server: S3Server,
    start_stack: Callable[..., AbstractContextManager[AtelierServer]],
    settings: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Web]:
    """A stack of its own on S3 (redirects on, as by default), seen from a browser; files this
    process stores go to the same bucket and location."""
    location = f"browser-{time.monotonic_ns()}"
    use_s3_storage(settings, s3_server, location)
    env = storage_env(s3_server, location)
    with start_stack(tmp_path_factory.mktemp("s3-browser"), env_overrides=env) as stack:
        platform, artifacts = f"http://localhost:{stack.port}", f"http://127.0.0.1:{stack.port}"
        settings.SITE_URL, settings.ARTIFACT_ORIGIN = platform, artifacts
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        web = Web(server=stack, context=context, platform=platform, artifacts=artifacts)
        context.on("response", lambda response: web.requests.append(response.url))
        try:
            yield web
        finally:
            context.close()


def test_media_from_the_store_shows_and_plays_and_nothing_else_of_it_loads(
    web_on_s3: Web, team: Team, s3_server: S3Server
) -> None:
    web = web_on_s3
    store = s3_server.endpoint_url
    page_html = (
        '<!doctype html><img id="sibling" src="poster.png">'
        f'<img id="elsewhere" src="{store}/{BUCKET}-elsewhere/x.png"><img id="other" src="{store}/{BUCKET}/other/x.png">'
    ).encode()
    run = finished_run(
        workspace=team.workspace,
        author=team.owner,
        outputs=[
            Output("poster.png", png_bytes(640, 400)),
            Output("countdown.mp4", mp4_bytes(seconds=4)),
            Output("page.html", page_html),
        ],
    )
    artifacts = {a.path: a for a in run.artifacts.all()}
    page = web.page()
    web.sign_in(page, team.owner.username, PASSWORD)

    page.goto(web.platform + reverse("artifact_detail", args=[artifacts["poster.png"].pk]))
    assert page.locator("img.artifact-image").evaluate(IMAGE_WIDTH) == 640
    assert web.requested(f"{store}/{BUCKET}/{s3_server.location}/artifacts/"), "the picture came from the store"

    from_store: list[int] = []
    page.on("response", lambda r: from_store.append(r.status) if r.url.startswith(store) else None)
    page.goto(web.platform + reverse("artifact_detail", args=[artifacts["countdown.mp4"].pk]))
    assert page.locator("video").evaluate(SEEK_VIDEO) == pytest.approx(2.5, abs=0.2)
    assert 206 in from_store, "the video was read by ranges from the store"

    # The page's own picture, by its relative path: redirected to the store, and allowed there.
    refused: dict[str, str | None] = {}
    web.context.on("requestfailed", lambda request: refused.update({request.url: request.failure}))
    page.goto(web.platform + reverse("artifact_detail", args=[artifacts["page.html"].pk]))
    frame = page.frame_locator("iframe.artifact-frame")
    assert frame.locator("#sibling").evaluate(IMAGE_WIDTH) == 640
    page.wait_for_load_state("networkidle")
    # Anything else of the store the page asks for is refused by its CSP, before it leaves the
    # browser (the store would have answered, and kept the request in its logs).
    assert refused.get(f"{store}/{BUCKET}-elsewhere/x.png") == "csp", "another bucket of the store"
    assert refused.get(f"{store}/{BUCKET}/other/x.png") == "csp", "an object of ours outside this location"
