"""The compare page in Chromium, end to end: the page lists what changed at once, the stack's worker
works out the details in a preview sandbox, and the page swaps them in by itself; pictures come from
the artifact origin. At 1280 and 390 pixels wide.

Screenshots are saved to tests/screenshots/compare.png and compare-390.png for people to look at.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.artifacts import Output
from tests.support.comparisons import poster_png, text_lines, two_versions
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import IMAGE_WIDTH, Web

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.docker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_image"),
]


def test_two_versions_side_by_side_with_what_changed(web: Web, team: Team) -> None:
    run_a, run_b = two_versions(
        workspace=team.workspace,
        author=team.owner,
        older=[
            Output("poster.png", poster_png(800, 500)),
            Output("report.md", text_lines(60)),
            Output("draft.txt", b"first draft\n"),
            Output("data.csv", b"city,stops\nTokyo,3\n"),
        ],
        newer=[
            Output("poster.png", poster_png(800, 500, patch=(520, 60, 719, 159))),
            Output("report.md", text_lines(60, changed={12: "## A <new> heading", 40: "a rewritten closing line"})),
            Output("final.txt", b"final\n"),
            Output("data.csv", b"city,stops\nTokyo,3\n"),
        ],
    )
    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}/creations/{run_a.creation_id}/compare/")

    summary = page.locator('[data-role="compare-summary"]')
    expect(summary).to_contain_text(f"v{run_a.version} → v{run_b.version}")
    expect(summary).to_contain_text("1 added")
    expect(summary).to_contain_text("1 removed")
    expect(summary).to_contain_text("2 changed")
    expect(summary).to_contain_text("1 unchanged")

    # The worker's sandbox makes the details; the page looks again until they are in.
    overlay = page.locator('[data-role="overlay"]')
    expect(overlay).to_be_visible(timeout=180_000)
    expect(page.locator('[data-role="compare-pending"]')).to_have_count(0, timeout=60_000)
    expect(page.locator('[data-role="pixel-summary"]')).to_contain_text("5.00% of pixels changed (20000 of 400000)")
    expect(page.locator('[data-role="pixel-summary"]')).to_contain_text("520,60 \u2013 720,160")
    diff = page.locator('[data-role="line-diff"]')
    expect(diff.locator(".diff-add")).to_have_text(["+## A <new> heading", "+a rewritten closing line"])
    expect(diff.locator(".diff-del")).to_have_count(2)

    src = overlay.get_attribute("src") or ""
    assert src.startswith(f"{web.artifacts}/d/")
    assert overlay.evaluate(IMAGE_WIDTH) == 800  # it loaded, from the artifact origin, under the page's CSP
    for image in page.locator(".compare-pictures img").all():
        assert (image.get_attribute("src") or "").startswith(f"{web.artifacts}/")
    web.shot(page, "compare")

    page.set_viewport_size({"width": 390, "height": 844})
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than a 390 px screen"
    web.shot(page, "compare-390")
