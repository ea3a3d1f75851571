"""The Evaluations pages with Django's client on PostgreSQL: a bad task file comes back naming the
line and field with nothing kept; the demo model is refused with its sentence; the results page
and its CSV show the accuracies, intervals and the sandbox minus plain difference."""

from __future__ import annotations

import csv
import html
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from creations.evaluations.models import Evaluation, EvaluationItem, ItemStatus, Suite
from creations.evaluations.services import DEMO_REFUSED, evaluation_start
from creations.evaluations.suites import suite_upload
from tests.creations.evaluations.conftest import PlainMessages, suite_lines
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in
from workspaces.models import ModelEndpoint

pytestmark = pytest.mark.django_db


def test_the_nav_leads_to_evaluations(client: Client, team: Team) -> None:
    page = signed_in(client, team.viewer).get(reverse("workspace_dashboard", args=[team.workspace.slug]))
    assert reverse("evaluations_list", args=[team.workspace.slug]).encode() in page.content
    listing = client.get(reverse("evaluations_list", args=[team.workspace.slug]))
    assert b"Start an evaluation" not in listing.content  # viewers read, members run


def test_a_bad_task_file_names_the_line_and_field_and_keeps_nothing(client: Client, team: Team) -> None:
    bad = suite_lines(2) + b'\n{"id": "t3", "prompt": "", "rule": "number", "expected": "9"}'
    page = signed_in(client, team.member).post(
        reverse("suite_upload", args=[team.workspace.slug]),
        {"name": "Squares", "tasks": SimpleUploadedFile("squares.jsonl", bad)},
    )
    assert page.status_code == 400
    assert "Line 3, field “prompt”: is empty." in page.content.decode()
    assert "Nothing was kept." in page.content.decode()
    assert not Suite.objects.exists()


def test_an_upload_leads_to_starting_it_and_the_demo_model_is_refused(
    client: Client, team: Team, endpoint: ModelEndpoint
) -> None:
    signed_in(client, team.member)
    page = client.post(
        reverse("suite_upload", args=[team.workspace.slug]),
        {"name": "Squares", "tasks": SimpleUploadedFile("squares.jsonl", suite_lines(3))},
    )
    suite = Suite.objects.get()
    assert page.status_code == 302
    assert page["Location"] == reverse("evaluation_new", args=[team.workspace.slug]) + f"?suite={suite.pk}"
    form = client.get(page["Location"])
    assert "team model (m)" in form.content.decode()
    refused = client.post(
        reverse("evaluation_new", args=[team.workspace.slug]),
        {"suite": suite.pk, "models": ["demo", str(endpoint.pk)], "modes": "both"},
    )
    assert refused.status_code == 400
    assert DEMO_REFUSED in html.unescape(refused.content.decode())
    assert not Evaluation.objects.exists()


def _results(team: Team, endpoint: ModelEndpoint) -> Evaluation:
    """An evaluation of 10 tasks in both modes whose answers are settled by hand: sandbox 8 of 10
    right, plain 5 of 10."""
    suite = suite_upload(workspace=team.workspace, user=team.member, name="Squares", data=suite_lines(10))
    evaluation = evaluation_start(
        workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="both"
    )
    for item in EvaluationItem.objects.filter(evaluation=evaluation).select_related("task"):
        n = int(item.task.task_id[1:])
        right = n <= 8 if item.mode == "sandbox" else n <= 5
        item.status, item.correct, item.answer = ItemStatus.SCORED, right, str(n * n if right else 0)
        item.prompt_tokens, item.completion_tokens, item.seconds = 100, 20, 2.0
        item.save()
    return evaluation


def test_the_results_show_accuracy_interval_and_difference(
    client: Client, team: Team, endpoint: ModelEndpoint, plain_messages: PlainMessages
) -> None:
    evaluation = _results(team, endpoint)
    page = signed_in(client, team.viewer).get(reverse("evaluation_detail", args=[evaluation.pk]))
    text = page.content.decode()
    assert page.status_code == 200
    assert '<td data-label="Accuracy" data-role="accuracy">80.0%</td>' in text
    assert '<td data-label="95% interval" data-role="interval">49.0% to 94.3%</td>' in text
    assert '<td data-label="Accuracy" data-role="accuracy">50.0%</td>' in text
    assert "+30.0 points" in text
    assert "team model · sandbox: 80.0% (95% interval 49.0% to 94.3%), 8 of 10" in text  # the chart's bar
    assert "Cancel evaluation" not in text  # viewers read only
    rows = list(csv.reader(io.StringIO(b"".join(client.get(f"/evaluations/{evaluation.pk}/results.csv")).decode())))
    assert rows[1:] == [
        ["team model", "sandbox", "10", "8", "80.0", "49.0", "94.3", "120", "2.00", "+30.0", "0"],
        ["team model", "plain", "10", "5", "50.0", "23.7", "76.3", "120", "2.00", "+30.0", "0"],
    ]
