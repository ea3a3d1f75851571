"""The compare page in Chromium, end to end: the page lists what changed at once, the stack's worker
works out the details in a preview sandbox, and the page swaps them in by itself; pictures come from
the artifact origin. At 1280 and 390 pixels wide.

Screenshots are saved to tests/screenshots/compare.png and compare-390.png for people to look at.

And the arena: two models make one brief side by side, blind until the vote (arena-*.png).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from creations.arena.models import Contestant
from devstack.scripted_model import ScriptedModel, ScriptEntry, bash
from devstack.scripted_model import submit as submit_reply
from tests.support.artifacts import Output
from tests.support.comparisons import poster_png, text_lines, two_versions
from tests.support.factories import ModelEndpointFactory
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import IMAGE_WIDTH, Web
from tests.support.runs import per_conversation

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


def _draws(colour: str) -> list[ScriptEntry]:
    rect = f'<rect width="240" height="160" fill="{colour}"/>'
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="240" height="160">{rect}</svg>'
    return [
        bash(f"mkdir -p /testbed/output && printf '%s' '{svg}' > /testbed/output/poster.svg", f"A {colour} poster."),
        submit_reply(f"A {colour} poster."),
    ]


def test_two_models_compared_blind_then_voted_for_names_revealed_and_ranked(
    web: Web, team: Team, scripted_model: ScriptedModel
) -> None:
    """The arena end to end: two scripted models make the same brief in their sandboxes, the page
    shows them as A and B only, the vote names them, and the leaderboard ranks the winner first."""
    scripted_model.exhausted = per_conversation(_draws("teal"))
    with ScriptedModel(exhausted=per_conversation(_draws("orange"))) as other_model:
        first = ModelEndpointFactory.create(
            workspace=team.workspace, name="Quillfeather-7", base_url=scripted_model.base_url, model="scripted"
        )
        second = ModelEndpointFactory.create(
            workspace=team.workspace, name="Brassmoth-2", base_url=other_model.base_url, model="scripted"
        )
        page = web.page()
        web.sign_in(page, team.member.username, PASSWORD)
        page.goto(f"{web.platform}/w/{team.workspace.slug}/new/")
        page.get_by_label("Brief", exact=True).fill("A poster for the spring fair")
        page.locator("[data-role=compare-models] > summary").click()
        page.get_by_label(f"{first.name} ({first.model})", exact=True).check()
        page.get_by_label(f"{second.name} ({second.model})", exact=True).check()
        expect(page.get_by_role("checkbox", name=re.compile("^Blind"))).to_be_checked()
        page.get_by_role("button", name="Compare models").click()
        page.wait_for_url("**/comparisons/*/")

        # The page looks again by itself until both have ended, naming neither model.
        columns = page.locator("[data-contestant]")
        expect(columns).to_have_count(2)
        expect(columns.locator("[data-role=status]")).to_have_text(["Succeeded", "Succeeded"], timeout=240_000)
        pictures = columns.locator("img.artifact-image")
        expect(pictures).to_have_count(2)
        for picture in pictures.all():
            picture.scroll_into_view_if_needed()
            assert (picture.get_attribute("src") or "").startswith(f"{web.artifacts}/")
            assert picture.evaluate(IMAGE_WIDTH) == 240
        before = page.content()
        assert first.name not in before
        assert second.name not in before
        web.shot(page, "arena-blind")

        named = {c.letter: c.model_endpoint.name for c in Contestant.objects.select_related("model_endpoint")}
        assert sorted(named.values()) == sorted([first.name, second.name])
        page.get_by_role("radio", name="B", exact=True).check()
        page.get_by_role("button", name="Vote").click()
        expect(page.locator("[data-role=my-vote]")).to_have_text(f"You voted for B ({named['B']}). A vote is final.")
        expect(page.locator("[data-contestant=A] [data-role=model-name]")).to_have_text(named["A"])
        expect(page.locator("[data-contestant=B] [data-role=model-name]")).to_have_text(named["B"])
        web.shot(page, "arena-voted")

        page.get_by_role("link", name="See the leaderboard").click()
        board = page.locator("[data-role=board-overall] tbody tr")
        expect(board).to_have_count(2)
        expect(board.first).to_have_attribute("data-model", named["B"])
        expect(page.locator("[data-role=board-svg]")).to_be_visible()  # what both made: a vector image
        web.shot(page, "arena-leaderboard")
