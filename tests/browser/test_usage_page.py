"""The usage page in Chromium, drawn from real ledger rows: the quota bars with their
figures, and the day-by-day charts with a bar for each person's spending on each day.
Last month's rows, so the days drawn never depend on today's date.

The screenshot is saved to tests/screenshots/usage.png for people to look at.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.sync_api import expect

from creations.usage.selectors import month_start
from tests.support.factories import ArtifactFactory, CreationFactory, UsageRecordFactory
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import Web

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

SPENT = [  # (day of last month, person, model, tokens, sandbox seconds, title)
    (1, "owner", "house-gpt", 42_000, 900, "Tokyo food map"),
    (1, "member", "tiny-llama", 9_000, 300, "Birthday countdown"),
    (2, "member", "house-gpt", 27_500, 1_500, "Calm piano piece"),
    (3, "owner", "tiny-llama", 12_000, 240, "Event poster"),
]


def test_the_usage_page_draws_this_months_ledger(web: Web, team: Team) -> None:
    workspace = team.workspace
    workspace.quota_month_tokens = 200_000
    workspace.quota_month_sandbox_seconds = 10 * 3600
    workspace.quota_storage_bytes = 10 * 1000 * 1000
    workspace.save()
    last_month = month_start(month_start() - timedelta(days=1))
    for day, who, model, tokens, seconds, title in SPENT:
        person = getattr(team, who)
        when = last_month + timedelta(days=day - 1, hours=12)
        creation = CreationFactory.create(workspace=workspace, author=person, title=title)
        UsageRecordFactory.create(
            workspace=workspace,
            creation=creation,
            creation_title=title,
            person=person,
            model_name=model,
            prompt_tokens=tokens * 4 // 5,
            completion_tokens=tokens - tokens * 4 // 5,
            sandbox_seconds=seconds,
            bytes_stored=1_500_000,
            recorded_at=when,
        )
    ArtifactFactory.create(run__creation__workspace=workspace, size=1_500_000)

    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}{workspace.get_absolute_url()}")
    page.get_by_role("link", name="Usage").click()
    expect(page.get_by_role("heading", name="Usage", exact=True)).to_be_visible()
    month = last_month.strftime("%B %Y")
    page.get_by_role("link", name=f"← {month}").click()
    expect(page.locator(".page-head")).to_contain_text(month)

    quotas = page.locator(".quotas")
    for label in ("Runs at once", "Model tokens", "Sandbox time", "Storage"):
        expect(quotas).to_contain_text(label)
    expect(quotas.locator('[data-quota="tokens"]')).to_contain_text(f"90,500 in {month}")
    expect(quotas.locator('[data-quota="tokens"]')).to_contain_text("of 200,000 a month")
    expect(quotas.locator('[data-quota="tokens"]')).to_contain_text("45% used")
    expect(quotas.locator('[data-quota="sandbox"]')).to_contain_text("49 minutes")
    expect(quotas.locator('[data-quota="storage"]')).to_contain_text("1.4 MB kept now")
    expect(quotas.locator('[data-quota="storage"]')).to_contain_text("15% used")
    expect(quotas.locator(".quota-bar rect.used")).to_have_count(3)  # no run going now: that bar is empty

    tokens_chart = page.locator("svg#tokens-chart")
    expect(tokens_chart).to_be_visible()
    # One bar piece per person and day (day 1 stacks both), and each day's total above it.
    expect(tokens_chart.locator("rect.bar")).to_have_count(4)
    expect(tokens_chart.locator("text.value")).to_have_text(["51k", "27.5k", "12k"])
    expect(tokens_chart.locator(".legend")).to_contain_text("alice")
    expect(tokens_chart.locator(".legend")).to_contain_text("bob")
    expect(tokens_chart).to_contain_text("Model tokens")
    costliest = page.locator("table.costliest")
    expect(costliest.get_by_role("link", name="Tokyo food map")).to_be_visible()
    web.shot(page, "usage")

    page.get_by_role("link", name="By model").click()
    expect(page.locator("svg#tokens-chart .legend")).to_contain_text("house-gpt")
    expect(page.locator("svg#tokens-chart .legend")).not_to_contain_text("alice")
