"""The new-creation form's limits in Chromium, against the running stack (daphne): a brief counts
its characters as it is typed and is never cut, and a request too large to take brings the form
back with what was typed and why, never an error page.

Screenshots: tests/screenshots/new-creation-brief-over-its-limit.png and
new-creation-too-large.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from creations.models import Creation, RunStatus
from tests.support.factories import RunFactory
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import Web

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _runs_wait(team: Team) -> None:
    """The workspace's one slot is taken, so a new run waits: these tests need no sandbox."""
    team.workspace.quota_concurrent_runs = 1
    team.workspace.save(update_fields=["quota_concurrent_runs"])
    RunFactory.create(status=RunStatus.RUNNING, creation__workspace=team.workspace, heartbeat_at=timezone.now())


def test_the_brief_counts_as_typed_refuses_past_its_limit_and_keeps_every_character(
    web: Web, team: Team, settings: Any
) -> None:
    _runs_wait(team)
    limit = settings.RUN_BRIEF_MAX_CHARS
    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}/w/{team.workspace.slug}/new/")
    brief = page.get_by_label("Brief", exact=True)
    counter = page.locator("#id_brief-count")

    brief.fill("A map of the bakeries")
    expect(counter).to_have_text(f"21 / {limit:,} characters")

    # A paste past the limit is kept whole; the counter says by how much, and Start does not send it.
    line = "A map of every bakery in Lyon, with opening hours.\n"
    too_long = line * (limit // len(line)) + "x" * (limit % len(line) + 12)
    brief.fill(too_long)
    expect(counter).to_have_text(f"{limit + 12:,} / {limit:,} characters: 12 too many. Shorten it to start.")
    expect(brief).to_have_attribute("aria-invalid", "true")
    page.get_by_role("button", name="Start").click()
    expect(counter).to_have_attribute("role", "alert")
    expect(brief).to_be_focused()
    assert page.url == f"{web.platform}/w/{team.workspace.slug}/new/"
    assert len(brief.input_value()) == limit + 12
    web.shot(page, "new-creation-brief-over-its-limit")
    assert not Creation.objects.filter(brief__startswith=line).exists()

    # Exactly at the limit (line ends and all, which the browser sends as CR LF): it goes, whole.
    at_limit = too_long[:limit]
    brief.fill(at_limit)
    expect(counter).to_have_text(f"{limit:,} / {limit:,} characters")
    expect(brief).not_to_have_attribute("aria-invalid", "true")
    page.get_by_role("button", name="Start").click()
    page.wait_for_url(lambda url: "/runs/" in url)
    assert Creation.objects.filter(brief=at_limit).count() == 1


def test_files_too_large_to_send_bring_the_form_back_with_the_brief(
    web: Web, team: Team, settings: Any, tmp_path: Path
) -> None:
    big = tmp_path / "survey.csv"
    with big.open("wb") as handle:  # sparse: nothing is written, the browser reads zeros
        handle.truncate(settings.REQUEST_BODY_MAX_BYTES + 1024 * 1024)
    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}/w/{team.workspace.slug}/new/")
    page.get_by_label("Brief", exact=True).fill("A map of the survey's sites, one pin per site")
    page.get_by_label("Title").fill("Survey sites")
    page.get_by_label("Input files").set_input_files(str(big))

    with page.expect_response(lambda response: response.request.method == "POST") as answer:
        page.get_by_role("button", name="Start").click()
    assert answer.value.status == 413

    expect(page.get_by_role("heading", name="New creation")).to_be_visible()
    refusal = page.locator("[data-refusal]")
    expect(refusal).to_contain_text("more than the")
    expect(refusal).to_contain_text("one request may carry")
    expect(refusal).to_contain_text("choose your files again (survey.csv)")
    expect(page.get_by_label("Brief", exact=True)).to_have_value("A map of the survey's sites, one pin per site")
    expect(page.get_by_label("Title")).to_have_value("Survey sites")
    expect(page.get_by_text("Traceback")).to_have_count(0)
    web.shot(page, "new-creation-too-large")
    assert not Creation.objects.exists()
