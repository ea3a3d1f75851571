"""The new-creation form's limits in Chromium, against the running stack (daphne): a brief counts
its characters as it is typed and is never cut, and a request too large to take brings the form
back with what was typed and why, never an error page.

The form checks chosen files (type, size, names) in the browser before sending them, and keeps
them chosen while the person fixes what is wrong.

Screenshots: tests/screenshots/new-creation-brief-over-its-limit.png, new-creation-too-large.png
and new-creation-files-checked.png.
"""

from __future__ import annotations

import re
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
    # The form's script refuses a file this large before sending it (the test below): a client without
    # the script sends it all the same, and this is what the server answers.
    page = web.page_without_scripts()
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


def test_the_form_checks_files_before_sending_them_and_keeps_them_chosen(
    web: Web, team: Team, settings: Any, tmp_path: Path
) -> None:
    _runs_wait(team)
    big = tmp_path / "survey.csv"
    with big.open("wb") as handle:  # sparse: nothing is written, the browser reads zeros
        handle.truncate(settings.UPLOAD_MAX_FILE_BYTES + 1)
    (tmp_path / "tool.exe").write_bytes(b"MZ")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "stops.csv").write_bytes(b"name\nTsukiji\n")
    (tmp_path / "b" / "stops.csv").write_bytes(b"name\nAsakusa\n")
    chosen = [big, tmp_path / "tool.exe", tmp_path / "a" / "stops.csv", tmp_path / "b" / "stops.csv"]
    posts: list[str] = []
    page = web.page()
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}/w/{team.workspace.slug}/new/")
    expect(page.locator("[data-role=demo-note]")).to_contain_text("only replays its five showcase briefs")
    files = page.get_by_label("Input files")
    files.set_input_files([str(path) for path in chosen])

    listed = page.locator("[data-file-list] li")
    expect(listed).to_have_count(4)
    expect(listed.nth(0)).to_contain_text("too large (at most 25.0 MB)")
    expect(listed.nth(1)).to_contain_text("this type of file is not accepted")
    expect(listed.nth(2)).not_to_have_attribute("data-file-problem", re.compile(".+"))
    expect(listed.nth(3)).to_contain_text("another file has this name")

    # Start without a brief: nothing is sent, each reason is said, and the files stay chosen.
    posts.clear()
    page.get_by_role("button", name="Start").click()
    said = page.locator("[data-client-errors]")
    expect(said).to_contain_text("Nothing was sent yet. Your files stay chosen while you fix this:")
    expect(said).to_contain_text("Write a brief")
    expect(said).to_contain_text("survey.csv: too large")
    expect(said).to_contain_text("tool.exe: this type of file is not accepted")
    expect(said).to_contain_text("stops.csv: another file has this name")
    expect(page.get_by_label("Brief", exact=True)).to_be_focused()
    assert files.evaluate("input => input.files.length") == 4
    assert posts == []
    web.shot(page, "new-creation-files-checked")

    # Removing what is wrong and writing a brief: it goes, with the file that was right.
    for name in ("survey.csv", "tool.exe", "stops.csv"):
        page.get_by_role("button", name=f"Remove {name}").last.click()
    expect(listed).to_have_count(1)
    page.get_by_label("Brief", exact=True).fill("A map of these stops")
    page.get_by_role("button", name="Start").click()
    page.wait_for_url(lambda url: "/runs/" in url)
    creation = Creation.objects.get(brief="A map of these stops")
    assert [(f.name, f.size) for f in creation.inputs.all()] == [("stops.csv", 13)]
