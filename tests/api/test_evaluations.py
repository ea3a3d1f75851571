"""The evaluation operations with a personal access token: a bad suite refused (422) naming its
line and field with nothing kept; an evaluation started, read and its results listed per model,
mode and task; the demo model refused; a cancel twice is told it has ended (409)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from creations.evaluations.models import EvaluationItem, ItemStatus, Suite
from creations.evaluations.services import DEMO_REFUSED
from tests.creations.evaluations.conftest import suite_lines
from tests.support.api import ApiClient, token_for
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("celery.current_app.send_task", lambda *args, **kwargs: None)


def test_a_bad_suite_is_refused_naming_line_and_field(team: Team) -> None:
    api = ApiClient(token_for(team.member))
    bad = suite_lines(1) + b'\n{"id": "t2", "prompt": "p", "rule": "choice", "expected": "42"}'
    answer = api.post(
        f"/api/v1/workspaces/{team.workspace.slug}/suites",
        {"tasks": SimpleUploadedFile("s.jsonl", bad)},
        multipart=True,
    )
    assert answer.status_code == 422
    assert answer.json()["errors"] == [
        {
            "field": "tasks",
            "message": "Line 2, field “expected”: the expected answer names no choice letter (A, B, C, …).",
        }
    ]
    assert not Suite.objects.exists()


def test_start_read_and_cancel_an_evaluation(team: Team) -> None:
    endpoint = ModelEndpoint.objects.create(
        workspace=team.workspace, name="team model", base_url="http://127.0.0.1:9/v1", model="m"
    )
    api = ApiClient(token_for(team.member))
    slug = team.workspace.slug
    suite = api.post(
        f"/api/v1/workspaces/{slug}/suites",
        {"tasks": SimpleUploadedFile("squares.jsonl", suite_lines(2))},
        multipart=True,
    )
    assert suite.status_code == 201
    assert (suite.json()["name"], suite.json()["task_count"]) == ("squares", 2)
    refused = api.post(
        f"/api/v1/workspaces/{slug}/evaluations", {"suite_id": suite.json()["id"], "model_endpoint_ids": [None]}
    )
    assert refused.status_code == 422
    assert refused.json()["detail"] == DEMO_REFUSED
    started = api.post(
        f"/api/v1/workspaces/{slug}/evaluations",
        {"suite_id": suite.json()["id"], "model_endpoint_ids": [endpoint.pk], "modes": "plain"},
    )
    assert started.status_code == 201
    evaluation_id = started.json()["id"]
    first = EvaluationItem.objects.filter(evaluation_id=evaluation_id).order_by("position").first()
    assert first is not None
    EvaluationItem.objects.filter(pk=first.pk).update(
        status=ItemStatus.SCORED, correct=True, answer="1", answer_source="reply", prompt_tokens=9, seconds=0.5
    )
    results = api.get(f"/api/v1/evaluations/{evaluation_id}/results").json()
    assert results["models"] == [
        {
            "model": "team model",
            "sandbox_minus_plain": None,
            "modes": [
                {
                    "mode": "plain",
                    "tasks_counted": 1,
                    "correct": 1,
                    "accuracy": 1.0,
                    "ci95_low": pytest.approx(0.2065, abs=1e-4),
                    "ci95_high": 1.0,
                    "mean_tokens": 9.0,
                    "mean_seconds": 0.5,
                    "tasks_to_come": 1,
                }
            ],
        }
    ]
    assert [(t["task_id"], t["status"], t["correct"], t["answer_from"]) for t in results["tasks"]] == [
        ("t1", "scored", True, "reply"),
        ("t2", "in_flight", None, ""),
    ]
    assert api.get(f"/api/v1/evaluations/{evaluation_id}").json()["tasks_done"] == 1
    assert api.post(f"/api/v1/evaluations/{evaluation_id}/cancel").status_code == 202
    again = api.post(f"/api/v1/evaluations/{evaluation_id}/cancel")
    assert again.status_code == 409
