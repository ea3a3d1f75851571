"""A request body is a JSON object with the fields the operation documents. Anything else (a bare
string, a number, a list) is refused as a problem naming what is wrong, and changes nothing: a bare
string sent to rename a creation used to rename it after the string's `title()`. A number is a JSON
number and a flag a JSON true or false: `true` for a step limit used to be read as 1, and "5" as 5."""

from __future__ import annotations

import json

import pytest

from creations.models import Creation, Run, RunMessage
from creations.schedules.models import Schedule
from tests.support.api import api_as
from tests.support.factories import ModelEndpointFactory, RunFactory
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def a_run(team: Team) -> Run:
    return RunFactory.create(
        creation__workspace=team.workspace,
        creation__author=team.owner,
        creation__title="Poster",
        creation__model_endpoint=ModelEndpointFactory.create(workspace=team.workspace),
        finished=True,
    )


@pytest.mark.parametrize("body", ["a new title", 7, ["a new title"], None])
def test_a_rename_whose_body_is_not_an_object_is_refused_and_keeps_the_title(team: Team, body: object) -> None:
    run = a_run(team)
    response = api_as(team.member).post(f"/api/v1/runs/{run.pk}/rename", json.dumps(body))
    assert response.status_code == 422, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert "must be a JSON object" in json.dumps(response.json())
    run.creation.refresh_from_db()
    assert run.creation.title == "Poster"


def test_runs_and_messages_whose_body_is_not_an_object_are_refused(team: Team) -> None:
    run = a_run(team)
    client = api_as(team.member)
    submitted = client.post(f"/api/v1/workspaces/{team.workspace.slug}/runs", json.dumps("a poster"))
    message = client.post(f"/api/v1/runs/{run.pk}/messages", json.dumps(["make it red"]))
    assert [submitted.status_code, message.status_code] == [422, 422]
    assert Creation.objects.count() == 1
    assert not RunMessage.objects.exists()


def test_an_object_with_the_documented_fields_still_renames(team: Team) -> None:
    run = a_run(team)
    response = api_as(team.member).post(f"/api/v1/runs/{run.pk}/rename", {"title": "a new title"})
    assert response.status_code == 200, response.content
    run.creation.refresh_from_db()
    assert run.creation.title == "a new title"


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_steps", True), ("max_steps", "5"), ("max_seconds", "600"), ("max_tokens", True)],
)
def test_a_run_whose_numbers_are_not_json_numbers_is_refused_naming_the_field(
    team: Team, field: str, value: object
) -> None:
    response = api_as(team.member).post(
        f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "a poster", field: value}
    )
    assert response.status_code == 422, response.content
    assert field in json.dumps(response.json())
    assert not Creation.objects.exists()


def test_a_share_link_whose_flag_is_not_true_or_false_is_refused(team: Team) -> None:
    run = a_run(team)
    response = api_as(team.owner).post(f"/api/v1/runs/{run.pk}/share-links", {"pin": "yes"})
    assert response.status_code == 422, response.content
    assert "pin" in json.dumps(response.json())


def test_a_run_with_json_numbers_is_still_taken(team: Team) -> None:
    response = api_as(team.member).post(
        f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "a poster", "max_steps": 5, "max_tokens": 9000}
    )
    assert response.status_code == 201, response.content
    creation = Creation.objects.get()
    assert (creation.max_steps, creation.max_tokens) == (5, 9000)


@pytest.mark.parametrize("at", [5, 3600.5])
def test_a_schedule_whose_time_of_day_is_a_number_is_refused(team: Team, at: object) -> None:
    run = a_run(team)
    response = api_as(team.owner).send(
        "PUT", f"/api/v1/runs/{run.pk}/schedule", {"cadence": "daily", "instruction": "add today's", "at": at}
    )
    assert response.status_code == 422, response.content
    assert "written as text" in json.dumps(response.json())
    assert not Schedule.objects.exists()


def test_a_schedule_at_a_time_of_day_written_as_text_is_set(team: Team) -> None:
    run = a_run(team)
    response = api_as(team.owner).send(
        "PUT", f"/api/v1/runs/{run.pk}/schedule", {"cadence": "daily", "instruction": "add today's", "at": "07:30"}
    )
    assert response.status_code == 200, response.content
    assert Schedule.objects.get().cron.startswith("30 7 ")
