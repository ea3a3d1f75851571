"""A run that waits for its workspace's slots says so on its page, and the page
moves on by itself when the run starts: the waiting reason goes."""

from __future__ import annotations

import threading

import pytest
from playwright.sync_api import expect

from creations.models import Run, RunStatus
from devstack.scripted_model import ScriptedModel
from devstack.scripted_model import submit as submit_reply
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import Web
from tests.support.runs import held_until, per_brief, scripted_endpoint, submit, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

WAITING = "Waiting: 1 of 1 run in use in this workspace. It starts when one of them ends."


def test_a_waiting_run_shows_why_and_its_page_updates_when_it_starts(
    web: Web, team: Team, scripted_model: ScriptedModel, sandbox_image: str
) -> None:
    team.workspace.quota_concurrent_runs = 1
    team.workspace.save(update_fields=["quota_concurrent_runs"])
    first_done, second_done = threading.Event(), threading.Event()
    endpoint = scripted_endpoint(team, scripted_model, [submit_reply()])
    scripted_model.exhausted = per_brief(
        {
            "first brief": [held_until(first_done, submit_reply("first"))],
            "second brief": [held_until(second_done, submit_reply("All done."))],
        },
        default=[submit_reply()],
    )
    try:
        first = submit(team, endpoint, brief="first brief")
        wait_until(
            lambda: Run.objects.filter(pk=first.pk, status=RunStatus.RUNNING).exists(),
            timeout=120,
            what="the first run to take the workspace's one slot",
            logs=web.server.logs,
        )
        second = submit(team, endpoint, brief="second brief")
        page = web.page()
        web.sign_in(page, team.member.username, PASSWORD)
        page.goto(f"{web.platform}/runs/{second.pk}/")
        status, reason = page.locator("[data-role=status]"), page.locator("[data-role=reason]")
        expect(status).to_have_text("Queued")
        expect(reason).to_have_text(WAITING)
        web.shot(page, "run-waiting-for-a-slot")

        first_done.set()  # the slot frees: the second run starts, and the open page hears it
        expect(status).to_have_text("Running", timeout=120_000)
        expect(reason).to_be_hidden()

        second_done.set()
        expect(status).to_have_text("Succeeded", timeout=120_000)
        expect(reason).to_have_text("All done.")
    finally:
        first_done.set()
        second_done.set()
