"""Evaluations in Chromium on the real stack: a member uploads a suite through the page, starts a
plain-mode evaluation of a scripted model (the worker asks it over HTTP), and reads the results
table and chart as they fill in. The screenshot is saved to tests/screenshots/evaluation.png."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devstack.scripted_model import ScriptedModel, reply
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import Web
from workspaces.models import ModelEndpoint

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

QUESTIONS = {"capital-fr": ("What is the capital of France?", "Paris"), "sum": ("What is 19 + 23?", "42")}
QUESTIONS["capital-au"] = ("What is the capital of Australia?", "Canberra")


def answers(body: dict[str, Any]) -> Any:
    asked = body["messages"][0]["content"]
    said = {"France": "Paris.", "19 + 23": "It is 42.", "Australia": "Sydney"}  # one wrong of three
    return reply(next(text for key, text in said.items() if key in asked))


def test_upload_run_and_read_an_evaluation(web: Web, team: Team, tmp_path: Path) -> None:
    suite = tmp_path / "quiz.jsonl"
    rules = {"capital-fr": "exact", "sum": "number", "capital-au": "exact"}
    suite.write_text(
        "\n".join(
            json.dumps({"id": key, "prompt": prompt, "rule": rules[key], "expected": expected})
            for key, (prompt, expected) in QUESTIONS.items()
        )
    )
    with ScriptedModel(model="quiz-1") as model:
        model.exhausted = answers
        ModelEndpoint.objects.create(workspace=team.workspace, name="quizzer", base_url=model.base_url, model="quiz-1")
        page = web.page()
        web.sign_in(page, team.member.username, PASSWORD)
        page.goto(f"{web.platform}{team.workspace.get_absolute_url()}")
        page.get_by_role("link", name="Evaluations").click()
        page.get_by_role("link", name="Upload a suite").click()
        page.get_by_label("Name").fill("Quiz")
        page.get_by_label("Task file (JSON Lines)").set_input_files(str(suite))
        page.get_by_role("button", name="Upload").click()

        expect(page.get_by_role("heading", name="Start an evaluation")).to_be_visible()
        expect(page.get_by_label("Suite")).to_have_value(re.compile(r"\d+"))
        page.get_by_label("quizzer (quiz-1)").check()
        page.get_by_label("Plain: one chat completion, no tools").check()
        page.get_by_role("button", name="Start").click()

        expect(page.locator('[data-role="evaluation-state"]')).to_contain_text("Finished", timeout=60_000)
    results = page.locator('[data-role="results"]')
    expect(results.locator('[data-role="accuracy"]')).to_have_text(["66.7%"])
    expect(results.locator('[data-role="interval"]')).to_have_text(["20.8% to 93.9%"])
    expect(page.locator('[data-role="answers"] [data-role="score"]')).to_have_text(
        [re.compile("^right"), re.compile("^right"), re.compile("^wrong")]
    )
    chart = page.locator("svg#accuracy-chart")
    expect(chart).to_be_visible()
    expect(chart.locator("rect.bar")).to_have_count(1)
    expect(chart.locator("text.value")).to_have_text(["66.7%"])
    web.shot(page, "evaluation")
