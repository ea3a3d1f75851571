"""An artifact used as the next creation's input, in Chromium: "Use in a new creation" on the
artifact's page, the file attached on the form (with Remove, which works without a reload),
and the new creation that has it among its inputs.

Also the gallery those artifacts are found in: searched as typed, filtered by person and
model, and shown one tile per creation.

Screenshots: tests/screenshots/new-creation-with-an-artifact.png and gallery-search.png.
"""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from creations.models import Creation, RunStatus
from creations.web.gallery import DEMO_MODEL
from tests.support.artifacts import Output, finished_run
from tests.support.factories import ModelEndpointFactory, RunFactory
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import Web

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

STOPS = b"name,lat,lon\nTsukiji,35.66,139.77\nAsakusa,35.71,139.79\n"


def test_a_member_starts_a_creation_from_a_colleagues_artifact(web: Web, team: Team) -> None:
    earlier = finished_run(
        workspace=team.workspace,
        author=team.owner,
        outputs=[Output("stops.csv", STOPS), Output("notes.md", b"# Notes\n")],
    )
    stops = earlier.artifacts.get(path="stops.csv")
    # The workspace's one slot is taken, so the new run waits: this test needs no sandbox.
    team.workspace.quota_concurrent_runs = 1
    team.workspace.save(update_fields=["quota_concurrent_runs"])
    RunFactory.create(status=RunStatus.RUNNING, creation__workspace=team.workspace, heartbeat_at=timezone.now())

    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}/w/{team.workspace.slug}/gallery/")
    expect(page.get_by_role("link", name="Use in a new creation")).to_have_count(2)
    web.shot(page, "gallery-with-use-links")
    page.goto(f"{web.platform}/artifacts/{stops.pk}/")
    page.get_by_role("link", name="Use in a new creation").click()

    expect(page.get_by_role("heading", name="New creation")).to_be_visible()
    attached = page.locator("[data-attachment]")
    expect(attached).to_have_count(1)
    expect(attached).to_contain_text("stops.csv")
    expect(attached).to_contain_text("Text or code")
    web.shot(page, "new-creation-with-an-artifact")

    # Remove drops it from the form; the artifact page's link attaches it again.
    attached.get_by_role("link", name="Remove stops.csv").click()
    expect(attached).to_have_count(0)
    expect(page).to_have_url(f"{web.platform}/w/{team.workspace.slug}/new/?artifact={stops.pk}")  # no reload
    page.goto(f"{web.platform}/artifacts/{stops.pk}/")
    page.get_by_role("link", name="Use in a new creation").click()
    expect(attached).to_have_count(1)

    page.get_by_label("Brief", exact=True).fill("A map of these stops, with a walking route")
    page.get_by_role("button", name="Start").click()
    page.wait_for_url(lambda url: "/runs/" in url)
    page.get_by_role("link", name="Creation page").first.click()
    expect(page.get_by_text("Input files: stops.csv (")).to_be_visible()

    creation = Creation.objects.get(brief="A map of these stops, with a walking route")
    assert creation.author == team.member
    (copied,) = creation.inputs.all()
    assert (copied.name, copied.file.read()) == ("stops.csv", STOPS)


def test_a_member_searches_and_filters_the_gallery(web: Web, team: Team) -> None:
    endpoint = ModelEndpointFactory.create(workspace=team.workspace, name="House model", model="house-7b")
    tokyo = finished_run(
        workspace=team.workspace,
        author=team.owner,
        brief="A map of Tokyo's bakeries, one pin per bakery",
        outputs=[Output("bakeries.csv", STOPS), Output("notes.md", b"# Bakeries\n")],
    )
    finished_run(
        workspace=team.workspace,
        author=team.member,
        brief="A poster for the summer fair",
        outputs=[Output("fair.md", b"# Fair\n")],
    )
    lyon = finished_run(
        workspace=team.workspace, author=team.member, brief="Bakeries of Lyon", outputs=[Output("lyon.csv", STOPS)]
    )
    Creation.objects.filter(pk=lyon.creation_id).update(model_endpoint=endpoint, title="Lyon bread")
    Creation.objects.filter(pk=tokyo.creation_id).update(title="Tokyo bread")

    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}/w/{team.workspace.slug}/gallery/")
    grid = page.locator("#gallery-grid")
    expect(grid.locator(".tile")).to_have_count(4)

    page.get_by_label("Search").fill("bakery")  # the briefs say "bakeries": stemmed, found as typed
    expect(grid.locator(".tile")).to_have_count(3)
    expect(grid).not_to_contain_text("fair.md")
    assert "q=bakery" in page.url
    page.get_by_label("Person").select_option("bob")
    expect(grid.locator(".tile")).to_have_count(1)
    expect(grid).to_contain_text("lyon.csv")
    page.get_by_label("Person").select_option("")
    page.get_by_label("Model").select_option(DEMO_MODEL)
    page.get_by_label("Show").select_option("creations")
    expect(grid.locator(".tile")).to_have_count(1)
    expect(grid.locator(".tile")).to_contain_text("Tokyo bread")
    expect(grid.locator("[data-role=file-count]")).to_have_text("2 files")
    web.shot(page, "gallery-search")

    page.get_by_label("Search").fill("nothing like this")
    expect(grid).to_contain_text("Nothing matches “nothing like this” with these filters.")
