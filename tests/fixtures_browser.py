"""Headless Chromium (Debian's, through Playwright) against the running stack.

- `browser` (session): one Chromium for the whole test session.
- `web`: the running stack seen from a browser: the platform at
  http://localhost:PORT and the artifact origin at http://127.0.0.1:PORT (the
  same daphne, another host name, as in development), a fresh browser context
  per test, a log of every URL the browser got a response from, and `shot(page, name)`
  saving screenshots under tests/screenshots/ (git-ignored) for people to look at.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.fixtures_runs import AtelierServer
from tests.support import require

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = os.environ.get("ATELIER_TEST_CHROMIUM", "/usr/bin/chromium")
# From SANDBOX-NOTES: what Debian's Chromium needs to run headless as root in CI.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    require(shutil.which(CHROMIUM) is not None or Path(CHROMIUM).exists(), f"Chromium at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright (pip install -e '.[dev]')")
        raise
    # Playwright's sync API keeps an event loop in this thread; the ORM calls the tests
    # make between browser steps are plain synchronous code all the same.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    except Exception as error:
        playwright.stop()
        require(False, f"Chromium did not start under Playwright: {error}")
        raise
    try:
        yield chromium
    finally:
        chromium.close()
        playwright.stop()


@dataclass
class Web:
    server: AtelierServer
    context: BrowserContext
    platform: str
    artifacts: str
    requests: list[str] = field(default_factory=list)

    def page(self) -> Page:
        page = self.context.new_page()
        page.set_default_timeout(30_000)
        return page

    def sign_in(self, page: Page, username: str, password: str) -> None:
        """Through the real login form, as a person would."""
        page.goto(f"{self.platform}/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(lambda url: "/accounts/login/" not in url)

    def shot(self, page: Page, name: str, *, full_page: bool = True) -> Path:
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        if full_page:  # load what is lazy below the fold, as a reader scrolling down would see it
            for element in page.locator("[loading=lazy]").all():
                element.scroll_into_view_if_needed()
            page.wait_for_load_state("networkidle")
            # A full-page capture leaves cross-origin frames (the artifact origin's) blank;
            # a viewport as tall as the page shows them.
            viewport = page.viewport_size or {"width": 1280, "height": 900}
            height = int(page.evaluate("document.documentElement.scrollHeight"))
            page.set_viewport_size({"width": viewport["width"], "height": height})
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(path))
            page.set_viewport_size(viewport)
            return path
        page.screenshot(path=str(path))
        return path

    def requested(self, fragment: str) -> list[str]:
        return [url for url in self.requests if fragment in url]

    def requested_within(self, page: Page, fragment: str, seconds: float = 3.0) -> list[str]:
        """Requests matching `fragment`, waiting up to `seconds` for one: a
        beacon fires asynchronously, and Playwright only records requests
        while it is waiting (so this waits through the page, not time.sleep)."""
        waited = 0.0
        while not self.requested(fragment) and waited < seconds:
            page.wait_for_timeout(100)
            waited += 0.1
        return self.requested(fragment)


@pytest.fixture
def web(run_stack: AtelierServer, browser: Browser, settings: Any) -> Iterator[Web]:
    platform, artifacts = f"http://localhost:{run_stack.port}", f"http://127.0.0.1:{run_stack.port}"
    # URLs made in this process (test data, expectations) match the server's.
    settings.SITE_URL, settings.ARTIFACT_ORIGIN = platform, artifacts
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    web = Web(server=run_stack, context=context, platform=platform, artifacts=artifacts)
    # Responses, not requests: Chromium reports a request a CSP then blocks, but it never gets an answer.
    context.on("response", lambda response: web.requests.append(response.url))
    try:
        yield web
    finally:
        context.close()


# The natural width of an <img>, waiting for it to load (lazy images load late).
IMAGE_WIDTH = (
    "(img) => img.complete ? img.naturalWidth"
    " : new Promise((ok) => img.addEventListener('load', () => ok(img.naturalWidth)))"
)
