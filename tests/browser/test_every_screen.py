"""Every kind of page, on a phone and by keyboard, in Chromium against the running stack.

One world (tests/support/every_page.py) and one browser context per phone width, 360 and 390 pixels:
each page is opened once per width, measured for sideways scroll, photographed into
tests/screenshots/ (`<page>-<width>.png`) and, at 390, checked by axe-core for serious and critical
accessibility problems. Then the keyboard: Tab through the new-creation form, the live run and the
compare view, seeing where focus goes and that it shows; and the live run says its new status politely.

How a page is looked at, where each Tab puts focus, and how the live run is ended as a worker
would end it: tests/browser/screen_probes.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.test import override_settings
from playwright.sync_api import Browser, expect

from devstack.stack import AtelierServer
from tests.browser.screen_probes import (
    Seen,
    add_session,
    finish_as_a_worker_would,
    look,
    open_rename,
    signed_in_as,
    tab_through,
)
from tests.support.every_page import (
    FORBIDDEN_PAGES,
    SIGNED_OUT_PAGES,
    EveryPage,
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
