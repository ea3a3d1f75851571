"""Every kind of page, on a phone and by keyboard, in Chromium against the running stack.

One world (tests/support/every_page.py) and one browser context per phone width, 360 and 390 pixels:
each page is opened once per width, measured for sideways scroll, photographed into
tests/screenshots/ (`<page>-<width>.png`) and, at 390, checked by axe-core for serious and critical
accessibility problems. Then the keyboard: Tab through the new-creation form, the live run and the
compare view, seeing where focus goes and that it shows; and the live run says its new status politely.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import User
from django.db import connections
from django.test import override_settings
from playwright.sync_api import Browser, Page, Response, expect

from creations.models import RunStatus
from creations.runs.state import run_finish
from devstack.stack import AtelierServer
from tests.support.every_page import (
    FORBIDDEN_PAGES,
    SIGNED_OUT_PAGES,
    EveryPage,
    Refused,
    build_every_page,
    pages,
    refused_requests,
)
from tests.support.fixtures.accounts import PASSWORD
from tests.support.fixtures.browser import Web
from tests.support.flush_retry import flush_database

# The module's world is committed once before its first test (`world`); each test, marked as using the
# database so that pytest-django sets one up, runs in a transaction of its own and commits nothing.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db,
    pytest.mark.xdist_group("every-screen"),
]

WIDTHS = (360, 390)
AXE_WIDTH = 390
# Axe checks the platform's own pages: the agent's files in their sandboxed frames are not ours to fix.
AXE_OPTIONS = {"resultTypes": ["violations"], "iframes": False}
SERIOUS = {"serious", "critical"}

# What sticks out past the right edge of the screen, for a message that says where to look.
WIDER_THAN_SCREEN = """() => {
  const width = window.innerWidth;
  return [...document.querySelectorAll("body *")]
    .filter((el) => el.getBoundingClientRect().right > width + 0.5 && el.getClientRects().length)
    .filter((el) => !el.parentElement || el.parentElement.getBoundingClientRect().right <= width + 0.5)
    .slice(0, 5)
    .map((el) => `${el.tagName.toLowerCase()}${el.className ? "." + String(el.className).split(" ").join(".") : ""}`
      + ` (right edge at ${Math.round(el.getBoundingClientRect().right)} px)`);
}"""

# Where keyboard focus is: what a screen reader would call the element, and whether a sighted
# person sees it (a visible box on screen with an outline or a ring around it).
FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const label = el.labels && el.labels.length ? el.labels[0].textContent
    : (el.getAttribute("aria-label") || el.textContent || el.getAttribute("name") || "");
  const style = getComputedStyle(el);
  const box = el.getBoundingClientRect();
  const ring = (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2) || style.boxShadow !== "none";
  const onScreen = box.width > 0 && box.height > 0 && box.bottom > 0 && box.top < window.innerHeight
    && box.right > 0 && box.left < window.innerWidth;
  return {name: label.replace(/\\s+/g, " ").trim(), tag: el.tagName.toLowerCase(), ring, onScreen};
}"""


ALL_PICTURES_LOADED = """async () => {
  const images = [...document.images];
  images.forEach((img) => { img.loading = "eager"; });
  await Promise.all(images.map((img) => img.complete ? null : new Promise((ok) => { img.onload = img.onerror = ok; })));
}"""

# A form with this many fields, posted from the page that is open (as a person's browser would post it).
POST_A_FORM = """({action, fields}) => {
  const form = document.createElement("form");
  form.method = "post";
  form.action = action;
  for (let i = 0; i < fields; i++) {
    const input = document.createElement("input");
    Object.assign(input, {type: "hidden", name: `field${i}`, value: "x"});
    form.append(input);
  }
  document.body.append(form);
  form.submit();
}"""


@dataclass
class Seen:
    """What one page showed at one width."""

    status: int  # the HTTP status it came with
    overflow: int  # how many pixels wider than the screen the page is (0: no sideways scroll)
    wider: list[str]  # what sticks out, when it does
    headings: list[str] = field(default_factory=list)  # its <h1>s
    violations: list[str] = field(default_factory=list)  # axe's serious and critical findings


@pytest.fixture(scope="module")
def world(atelier_server: AtelierServer, django_db_blocker: Any) -> Iterator[EveryPage]:
    """Built and committed once for the module (the stack's processes read it), removed after it
    as a transactional test's data is."""
    platform, artifacts = f"http://localhost:{atelier_server.port}", f"http://127.0.0.1:{atelier_server.port}"
    with override_settings(MEDIA_ROOT=atelier_server.media_root, SITE_URL=platform, ARTIFACT_ORIGIN=artifacts):
        with django_db_blocker.unblock():
            built = build_every_page()
        try:
            yield built
        finally:
            with django_db_blocker.unblock():
                flush_database()


@pytest.fixture(scope="module")
def phones(
    atelier_server: AtelierServer, browser: Browser, world: EveryPage, django_db_blocker: Any
) -> Iterator[dict[int, Web]]:
    """A browser context per phone width, each signed in as the workspace's owner."""
    platform, artifacts = f"http://localhost:{atelier_server.port}", f"http://127.0.0.1:{atelier_server.port}"
    contexts = {
        width: Web(
            server=atelier_server,
            context=browser.new_context(viewport={"width": width, "height": 800}),
            platform=platform,
            artifacts=artifacts,
        )
        for width in WIDTHS
    }
    for web in contexts.values():
        add_session(web, world.owner, django_db_blocker)
    try:
        yield contexts
    finally:
        for web in contexts.values():
            web.context.close()


# What the walk found, kept for the module's process: under pytest-xdist another module's tests may run
# between this module's on one worker, which tears the module's fixtures down and builds them again, and
# the walk is most of this module's time.
_WALKED: dict[tuple[str, int], Seen] = {}


@pytest.fixture(scope="module")
def seen(phones: dict[int, Web], world: EveryPage, django_db_blocker: Any) -> dict[tuple[str, int], Seen]:
    """Every page at every width, opened once: as the workspace's owner, signed out, and as its viewer
    for the page refused them."""
    if not _WALKED:
        _WALKED.update(_walk(phones, world, django_db_blocker))
    return _WALKED


def _walk(phones: dict[int, Web], world: EveryPage, django_db_blocker: Any) -> dict[tuple[str, int], Seen]:
    axe = Axe()
    found: dict[tuple[str, int], Seen] = {}
    for width, web in phones.items():
        checked = axe if width == AXE_WIDTH else None
        page = web.page()
        for name, path in pages(world).items():
            found[name, width] = look(web, page, name, path, checked)
        found["creation-renaming", width] = look(
            web, page, "creation-renaming", world.creation.get_absolute_url(), checked, then=open_rename
        )
        for name, refused in refused_requests(world).items():
            found[name, width] = look(web, page, name, refused.path, checked, refused=refused)
        with signed_in_as(web, None, django_db_blocker):
            signed_out = {**SIGNED_OUT_PAGES, "shared-page": f"{web.artifacts}/s/{world.share_token}/"}
            for name, path in signed_out.items():
                found[name, width] = look(web, page, name, path, checked)
        with signed_in_as(web, world.viewer, django_db_blocker):
            for name, path in FORBIDDEN_PAGES.items():
                found[name, width] = look(web, page, name, path, checked)
        page.close()
    return found


def add_session(web: Web, user: User, django_db_blocker: Any) -> None:
    """Sign the context in as `user`: a session committed where the stack's processes read it."""
    with django_db_blocker.unblock():
        name, value = web.server.cookie_for(user).split("=", 1)
    web.context.add_cookies([{"name": name, "value": value, "url": web.platform}])


@contextmanager
def signed_in_as(web: Web, user: User | None, django_db_blocker: Any) -> Iterator[None]:
    """The context signed in as `user` (None: signed out) for the block, then as before."""
    before = web.context.cookies()
    web.context.clear_cookies()
    if user is not None:
        add_session(web, user, django_db_blocker)
    try:
        yield
    finally:
        web.context.clear_cookies()
        web.context.add_cookies(before)  # type: ignore[arg-type]  # the cookies it gave, as it takes them


def open_rename(page: Page) -> None:
    page.locator("[data-role=rename] summary").click()
    expect(page.get_by_label("New title")).to_be_visible()


def look(
    web: Web,
    page: Page,
    name: str,
    path: str,
    axe: Axe | None,
    *,
    refused: Refused | None = None,
    then: Callable[[Page], None] | None = None,
) -> Seen:
    """The page at `path` (or what posting `refused`'s form there answers; `then` done on it), as it shows."""
    url = path if path.startswith("http") else web.platform + path
    response: Response | None
    if refused is not None and refused.form_fields:
        with page.expect_navigation() as navigation:
            page.evaluate(POST_A_FORM, {"action": url, "fields": refused.form_fields})
        response = navigation.value
    else:
        response = page.goto(url)
    if then is not None:
        then(page)
    overflow = int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))
    seen = Seen(
        status=response.status if response else 0,
        overflow=overflow,
        wider=page.evaluate(WIDER_THAN_SCREEN) if overflow > 0 else [],
    )
    seen.headings = [h.strip() for h in page.locator("h1").all_inner_texts()]
    if axe is not None:
        results = axe.run(page, options=AXE_OPTIONS).response
        seen.violations = [
            f"{v['id']} ({v['impact']}): {v['help']} at {', '.join(str(n['target']) for n in v['nodes'][:3])}"
            for v in results["violations"]
            if v["impact"] in SERIOUS
        ]
    viewport = page.viewport_size
    web.shot(page, f"{name}-{viewport['width'] if viewport else 0}")
    return seen


def test_no_page_scrolls_sideways_on_a_phone(seen: dict[tuple[str, int], Seen]) -> None:
    wide = {
        f"{name} at {width} px": f"{s.overflow} px too wide: {s.wider}"
        for (name, width), s in seen.items()
        if s.overflow > 0
    }
    assert not wide, "pages wider than the phone's screen:\n" + "\n".join(f"{k}: {v}" for k, v in wide.items())


def test_no_page_has_a_serious_accessibility_problem(seen: dict[tuple[str, int], Seen]) -> None:
    found = {name: s.violations for (name, width), s in seen.items() if width == AXE_WIDTH and s.violations}
    assert not found, "axe-core found:\n" + "\n".join(f"{name}: {v}" for name, vs in found.items() for v in vs)


def test_refused_requests_get_the_platforms_pages(seen: dict[tuple[str, int], Seen], world: EveryPage) -> None:
    for name, refused in refused_requests(world).items():
        assert seen[name, AXE_WIDTH].status == refused.status, f"{name} came back with {seen[name, AXE_WIDTH].status}"


def test_every_page_has_one_main_heading(seen: dict[tuple[str, int], Seen]) -> None:
    assert {name for name, _ in seen if name.startswith("artifact-")} >= {"artifact-image", "artifact-csv"}
    without = sorted({name for (name, _), s in seen.items() if len(s.headings) != 1})
    assert not without, f"pages without exactly one <h1>: {without}"


def test_the_menu_opens_and_closes_by_keyboard(phones: dict[int, Web], world: EveryPage) -> None:
    web = phones[360]
    page = web.page()
    page.goto(f"{web.platform}/w/{world.workspace.slug}/")
    menu = page.get_by_role("button", name="Menu")
    nav = page.get_by_role("navigation", name="Main")
    members = nav.get_by_role("link", name="Members")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(members).to_be_hidden()
    menu.focus()
    page.keyboard.press("Enter")
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(members).to_be_visible()
    web.shot(page, "menu-open-360", full_page=False)
    page.keyboard.press("Tab")  # into the menu: its first entry
    assert page.evaluate("document.activeElement.closest('nav') !== null")
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(menu).to_be_focused()
    expect(members).to_be_hidden()
    page.close()


def test_on_a_phone_the_bell_shows_its_count_with_the_menu_folded(phones: dict[int, Web], world: EveryPage) -> None:
    web = phones[360]
    page = web.page()
    page.goto(f"{web.platform}/w/{world.workspace.slug}/")
    expect(page.get_by_role("button", name="Menu")).to_have_attribute("aria-expanded", "false")
    bell = page.get_by_role("link", name="Notifications: 1 unread")
    expect(bell).to_be_visible()
    expect(bell.locator("[data-role=bell-count]")).to_have_text("1")
    page.close()


def test_without_javascript_the_menu_shows_and_still_fits(
    atelier_server: AtelierServer, browser: Browser, world: EveryPage
) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 800}, java_script_enabled=False)
    web = Web(server=atelier_server, context=context, platform=f"http://localhost:{atelier_server.port}", artifacts="")
    try:
        page = web.page()
        web.sign_in(page, world.owner.username, PASSWORD)
        page.goto(f"{web.platform}/w/{world.workspace.slug}/")
        expect(page.get_by_role("button", name="Menu")).to_have_count(0)  # no button that would do nothing
        expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Members")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
        web.shot(page, "menu-without-javascript-360", full_page=False)
    finally:
        context.close()


def tab_through(page: Page, presses: int) -> list[dict[str, Any]]:
    """Where focus lands on each Tab from the top of the page, once its pictures are in (a lazy one
    loading between a Tab and the look would move what has focus)."""
    page.evaluate(ALL_PICTURES_LOADED)
    page.evaluate("window.scrollTo(0, 0); document.activeElement && document.activeElement.blur()")
    stops = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if focused is None:
            break
        stops.append(focused)
    return stops


def in_order(stops: list[dict[str, Any]], expected: list[str]) -> None:
    names = [stop["name"] for stop in stops]
    position = 0
    for wanted in expected:
        matches = [i for i, name in enumerate(names) if i >= position and name.startswith(wanted)]
        assert matches, f"Tab never reaches {wanted!r} after {names[:position]}; it goes {names}"
        position = matches[0] + 1
    unseen = [stop for stop in stops if not (stop["ring"] and stop["onScreen"])]
    assert not unseen, f"focus is not shown on: {unseen}"


# Where Tab goes on each page, in this order (other stops may come between): at a phone's width, where
# the menu is folded behind its button, so Tab skips its links.
TOP = ["Skip to content", "Atelier home", "Menu"]
FOCUS_ORDER = {
    # The starters first (picking one fills the form and moves focus to the brief), then the form.
    "new-creation": [
        *TOP,
        "map",
        "report",
        "Brief",
        "Title",
        "Input files",
        "Model",
        "Workspace members",
        "Advanced limits",
        "Start",
    ],
    "run-live": [*TOP, "Calm piano piece", "Cancel run", "Creation page", "Brief", "Tell the agent", "Send"],
    "compare": [
        *TOP,
        "Studio",
        "Tokyo food map",
        "From",
        "To",
        "Compare",
        "map.html",
        "poster.png",
        "report.md",
        "Lines changed in report.md",
    ],
}


@pytest.mark.parametrize("page_name", sorted(FOCUS_ORDER))
def test_focus_moves_in_reading_order_and_shows(phones: dict[int, Web], world: EveryPage, page_name: str) -> None:
    web = phones[390]
    page = web.page()
    page.goto(web.platform + pages(world)[page_name])
    in_order(tab_through(page, 45), FOCUS_ORDER[page_name])
    page.close()


def finish_as_a_worker_would(run_id: int) -> None:
    """End the run from a connection of its own, committed at once (this test's own is in a
    transaction that the stack never sees)."""

    def finish() -> None:
        try:
            run_finish(run_id=run_id, status=RunStatus.SUCCEEDED, reason="The agent submitted its work.")
        finally:
            connections.close_all()

    worker = threading.Thread(target=finish)
    worker.start()
    worker.join(timeout=30)


def test_the_live_run_says_its_new_status_politely(phones: dict[int, Web], world: EveryPage) -> None:
    web = phones[390]
    page = web.page()
    page.goto(web.platform + world.live.get_absolute_url())
    status = page.locator("[data-role=status]")
    expect(status).to_have_text("Running")
    expect(page.locator("[data-role=connection]")).to_have_text("live")
    assert status.evaluate("(el) => el.closest('[aria-live=polite], [role=status]') !== null"), (
        "status changes are not announced"
    )
    finish_as_a_worker_would(world.live.pk)
    expect(status).to_have_text("Succeeded")
    expect(page.locator("[aria-live=polite][data-role=announcer]")).to_have_text("Run succeeded.")
    page.close()
