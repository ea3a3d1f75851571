"""The API's browsable docs: a signed-in person reads every operation and tries one
out with their own session, under the platform's Content-Security-Policy."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import Web

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_a_member_reads_the_docs_and_tries_an_operation(web: Web, team: Team) -> None:
    page = web.page()
    refused: list[str] = []
    page.on(
        "console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None
    )
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}/api/v1/docs")
    operation = page.locator(".opblock", has_text="Workspaces you belong to")
    expect(operation).to_be_visible()
    operation.locator(".opblock-summary").click()
    page.get_by_role("button", name="Try it out").click()
    page.get_by_role("button", name="Execute").click()
    expect(page.locator(".live-responses-table tr.response td.response-col_status").first).to_have_text("200")
    expect(page.locator(".responses-wrapper .highlight-code").first).to_contain_text(team.workspace.slug)
    web.shot(page, "api-docs")
    assert not refused, refused
