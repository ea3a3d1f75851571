"""A NUL character, which PostgreSQL can neither store nor compare, gets a clear refusal wherever a client
can send one: in a JSON field the API would store, in an address or in a query string, on the API and
on the pages alike; nothing is stored and nothing answers with a server error."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from creations.evaluations.models import Suite
from creations.models import Creation, Run, RunMessage, RunStatus
from creations.schedules.models import Schedule
from creations.webhooks.models import Webhook
from tests.support.api import api_as
from tests.support.factories import ModelEndpointFactory, RunFactory
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db

NUL = "\x00"


def a_run(team: Team, **fields: object) -> Run:
    fields.setdefault("finished", True)
    return RunFactory.create(
        creation__workspace=team.workspace,
        creation__author=team.owner,
        creation__model_endpoint=ModelEndpointFactory.create(workspace=team.workspace),
        **fields,
    )


@pytest.mark.parametrize(
    ("field", "body"),
    [
        ("brief", {"brief": f"a poster{NUL}"}),
        ("title", {"brief": "a poster", "title": f"Poster{NUL}"}),
    ],
)
def test_a_run_whose_brief_or_title_holds_nul_is_refused_naming_the_field(team: Team, field: str, body: dict) -> None:
    response = api_as(team.member).post(f"/api/v1/workspaces/{team.workspace.slug}/runs", body)
    assert response.status_code == 422, response.content
    problem = response.json()
    assert [e["field"] for e in problem["errors"]] == [field]
    assert "NUL" in problem["errors"][0]["message"]
    assert not Creation.objects.exists()


def test_a_refine_a_fork_and_a_message_holding_nul_are_refused(team: Team) -> None:
    run = a_run(team)
    client = api_as(team.member)
    refine = client.post(f"/api/v1/runs/{run.pk}/refine", {"instruction": f"bigger{NUL}"})
    fork = client.post(f"/api/v1/runs/{run.pk}/fork", {"brief": f"again{NUL}"})
    fork_elsewhere = client.post(f"/api/v1/runs/{run.pk}/fork", {"brief": "again", "workspace": f"x{NUL}"})
    running = a_run(team, status=RunStatus.RUNNING, finished=False)
    message = client.post(f"/api/v1/runs/{running.pk}/messages", {"text": f"hello{NUL}"})
    assert [r.status_code for r in (refine, fork, fork_elsewhere, message)] == [422, 422, 422, 422]
    assert Run.objects.count() == 2
    assert not RunMessage.objects.exists()


def test_a_title_or_brief_holding_half_a_character_is_refused_naming_the_field(team: Team) -> None:
    """JSON may carry a lone UTF-16 surrogate (`\\ud800`): not text, and no database can store it."""
    run = a_run(team)
    client = api_as(team.member)
    rename = client.post(f"/api/v1/runs/{run.pk}/rename", {"title": "Poster \ud800"})
    submit = client.post(f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "a poster \udfff"})
    for response, field in ((rename, "title"), (submit, "brief")):
        assert response.status_code == 422, response.content
        errors = response.json()["errors"]
        assert [e["field"] for e in errors] == [field]
        assert "lone surrogate" in errors[0]["message"]
    run.creation.refresh_from_db()
    assert run.creation.title != "Poster \ud800"
    assert Creation.objects.count() == 1


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/workspaces/%00",
        "/api/v1/workspaces/%00/runs",
        "/api/v1/runs?workspace=%00",
        "/api/v1/runs?workspace=a%00b&page_size=5",
    ],
)
def test_an_api_address_naming_nul_is_answered_400_as_a_problem(team: Team, path: str) -> None:
    response = api_as(team.member).get(path)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert "NUL" in response.json()["detail"]


@pytest.mark.parametrize("path", ["/w/%00/", "/w/{slug}/?q=%00", "/runs/1%00/"])
def test_a_page_address_naming_nul_is_answered_400_with_a_sentence(team: Team, path: str) -> None:
    browser = Client()
    browser.force_login(team.member)
    response = browser.get(path.format(slug=team.workspace.slug))
    assert response.status_code == 400
    assert "NUL character" in response.content.decode()


def test_an_address_without_nul_is_served_as_before(team: Team) -> None:
    browser = Client()
    browser.force_login(team.member)
    assert browser.get(f"/w/{team.workspace.slug}/?q=poster").status_code == 200
    assert api_as(team.member).get(f"/api/v1/runs?workspace={team.workspace.slug}").status_code == 200


@pytest.mark.parametrize("bad", [NUL, "\ud800"], ids=["nul", "lone surrogate"])
def test_schedules_webhooks_and_suites_refuse_text_that_cannot_be_stored_naming_the_field(team: Team, bad: str) -> None:
    run = a_run(team)
    owner = api_as(team.owner)
    schedule = owner.send("PUT", f"/api/v1/runs/{run.pk}/schedule", {"cadence": "daily", "instruction": f"x{bad}"})
    webhook = owner.post(
        f"/api/v1/workspaces/{team.workspace.slug}/webhooks",
        {"url": "http://127.0.0.1:9/", "events": ["run.succeeded"], "description": f"d{bad}"},
    )
    line = json.dumps({"id": "a", "prompt": f"what is 2+2{bad}", "expected": "4", "rule": "exact"})
    suite = owner.post(
        f"/api/v1/workspaces/{team.workspace.slug}/suites",
        {"tasks": SimpleUploadedFile("suite.jsonl", line.encode("utf-8", "surrogatepass")), "name": "Sums"},
        multipart=True,
    )
    # A form field is bytes, decoded by the platform: it can hold NUL, never half a character.
    named = owner.post(
        f"/api/v1/workspaces/{team.workspace.slug}/suites",
        {"tasks": SimpleUploadedFile("suite.jsonl", line.replace(bad, "").encode()), "name": f"Sums{NUL}"},
        multipart=True,
    )
    assert [r.status_code for r in (schedule, webhook, suite, named)] == [422, 422, 422, 422]
    assert [e["field"] for e in schedule.json()["errors"]] == ["instruction"]
    assert [e["field"] for e in webhook.json()["errors"]] == ["description"]
    assert "Line 1, field “prompt”" in suite.json()["detail"]
    assert [e["field"] for e in named.json()["errors"]] == ["name"]
    assert not Schedule.objects.exists()
    assert not Webhook.objects.exists()
    assert not Suite.objects.exists()
