"""How the every-screen tests (tests/browser/test_every_screen.py) look at the platform in Chromium.

`look` opens a page once and notes what it showed (`Seen`): its HTTP status, how far it scrolls
sideways and what sticks out, its main headings and axe-core's serious and critical findings; and
photographs it. A browser context is signed in with a session the stack's processes read
(`add_session`), or as someone else for a while (`signed_in_as`). For the keyboard, where focus
lands on each Tab (`tab_through`); for the live run, its end as a worker would end it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import User
from django.db import connections
from playwright.sync_api import Page, Response, expect

from creations.models import RunStatus
from creations.runs.state import run_finish
from tests.support.every_page import Refused
from tests.support.fixtures.browser import Web

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
