"""Runs through the API: started, read, listed, cancelled, run again and forked,
with the same rules the web pages follow."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from api.schemas.runs import RunStatusName, VisibilityName
from creations.models import Creation, Run, RunStatus, Visibility
from tests.support.api import api_as
from tests.support.factories import ModelEndpointFactory, RunFactory, make_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def start(team: Team, who: str = "member", **body: Any) -> Any:
    return api_as(getattr(team, who)).post(
        f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "a calm piano piece", **body}
    )


def test_a_member_starts_a_run_and_reads_it_back(team: Team) -> None:
    response = start(team, title="Piano", visibility="private")
    assert response.status_code == 201, response.content
    run = response.json()
    assert run["status"] == "queued"
    assert (run["title"], run["brief"], run["visibility"], run["model"]) == (
        "Piano",
        "a calm piano piece",
        "private",
        "demo",
    )
    assert run["web_url"].endswith(f"/runs/{run['id']}/")
    assert run["stream_url"].endswith(f"/api/v1/runs/{run['id']}/events/stream")
    creation = Creation.objects.get(pk=run["creation_id"])
    assert (creation.author, creation.workspace) == (team.member, team.workspace)
    again = api_as(team.member).get(f"/api/v1/runs/{run['id']}")
    assert again.status_code == 200
    assert again.json()["id"] == run["id"]


def test_a_run_with_the_workspaces_model(team: Team) -> None:
    endpoint = ModelEndpointFactory.create(workspace=team.workspace, name="Studio model")
    response = start(team, model_endpoint_id=endpoint.pk)
    assert response.status_code == 201
    assert (response.json()["model"], response.json()["model_endpoint_id"]) == ("Studio model", endpoint.pk)


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"brief": "   "}, "brief", "Write a brief"),
        ({"visibility": "everyone"}, "visibility", "Input should be"),
        ({"model_endpoint_id": 999_999}, "model_endpoint_id", "No such model"),
        ({"max_steps": 0}, "max_steps", "greater than or equal to 1"),
        ({"input_ids": [424_242]}, "input_ids", "upload it again"),
    ],
    ids=["blank brief", "unknown visibility", "unknown model", "zero steps", "unknown input"],
)
def test_bad_input_is_a_422_naming_the_field(team: Team, body: dict[str, Any], field: str, says: str) -> None:
    response = start(team, **body)
    assert response.status_code == 422, response.content
    problem = response.json()
    assert response["Content-Type"] == "application/problem+json"
    assert any(error["field"] == field and says in error["message"] for error in problem["errors"]), problem
    assert not Run.objects.exists()


def test_another_workspaces_model_is_refused(team: Team) -> None:
    elsewhere = ModelEndpointFactory.create()
    response = start(team, model_endpoint_id=elsewhere.pk)
    assert response.status_code == 422
    assert "not registered in this workspace" in response.json()["detail"]


def test_viewers_and_read_tokens_cannot_start_runs(team: Team) -> None:
    assert start(team, "viewer").status_code == 403
    read_only = api_as(team.member, scope="read")
    response = read_only.post(f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "x"})
    assert response.status_code == 403
    assert "can only read" in response.json()["detail"]
    assert start(team, "outsider").status_code == 404
    assert not Run.objects.exists()


@pytest.mark.usefixtures("rate_limit_clock")
def test_starting_runs_counts_under_the_submission_limit(team: Team, settings: Any) -> None:
    settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE = 2
    statuses = [start(team).status_code for _ in range(3)]
    assert statuses == [201, 201, 429]
    limited = start(team)
    assert limited["Retry-After"] == "60"
    assert limited.json()["detail"] == "You have started many runs in the last minute. Wait a minute and send it again."
    assert Run.objects.count() == 2


def test_others_private_runs_are_not_found_and_not_listed(team: Team) -> None:
    private = make_run(team, visibility=Visibility.PRIVATE)
    shared = make_run(team)
    member = api_as(team.member)
    assert member.get(f"/api/v1/runs/{private.pk}").status_code == 404
    listed = [run["id"] for run in member.get("/api/v1/runs").json()["results"]]
    assert listed == [shared.pk]
    assert api_as(team.outsider).get(f"/api/v1/runs/{shared.pk}").status_code == 404
    assert api_as(team.outsider).get("/api/v1/runs").json()["results"] == []


def test_the_list_walks_every_run_once_newest_first(team: Team) -> None:
    made = [make_run(team).pk for _ in range(7)]
    client, seen = api_as(team.viewer), []
    url: str | None = "/api/v1/runs?page_size=3"
    while url:
        page = client.get(url).json()
        seen += [run["id"] for run in page["results"]]
        url = page["next"]
    assert seen == sorted(made, reverse=True)


def test_the_list_filters_by_status_workspace_and_creation(team: Team) -> None:
    running = make_run(team, status=RunStatus.RUNNING)
    RunFactory.create(creation__workspace=team.workspace, creation__author=team.owner, finished=True)
    client = api_as(team.member)
    by_status = client.get("/api/v1/runs?status=running").json()["results"]
    assert [run["id"] for run in by_status] == [running.pk]
    by_creation = client.get(f"/api/v1/runs?creation={running.creation_id}").json()["results"]
    assert [run["id"] for run in by_creation] == [running.pk]
    assert client.get("/api/v1/runs?workspace=nowhere").status_code == 404
    assert len(client.get(f"/api/v1/runs?workspace={team.workspace.slug}").json()["results"]) == 2


def test_a_member_cancels_their_own_queued_run(team: Team) -> None:
    run_id = start(team).json()["id"]
    response = api_as(team.member).post(f"/api/v1/runs/{run_id}/cancel")
    assert response.status_code == 202
    assert response.json()["status"] == "cancelled"
    again = api_as(team.member).post(f"/api/v1/runs/{run_id}/cancel")
    assert again.status_code == 409
    assert again.json()["detail"] == f"Run {run_id} has already ended (cancelled): there is nothing to cancel."


def test_a_member_cannot_cancel_a_colleagues_run(team: Team) -> None:
    run = make_run(team)
    response = api_as(team.member).post(f"/api/v1/runs/{run.pk}/cancel")
    assert response.status_code == 403
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED


def test_rerun_and_fork_make_new_runs(team: Team) -> None:
    original = RunFactory.create(creation__workspace=team.workspace, creation__author=team.owner, finished=True)
    client = api_as(team.member)
    again = client.post(f"/api/v1/runs/{original.pk}/rerun")
    assert again.status_code == 201
    assert again.json()["creation_id"] == original.creation_id
    forked = client.post(f"/api/v1/runs/{original.pk}/fork", {"brief": "the same, in blue"})
    assert forked.status_code == 201
    assert forked.json()["forked_from_creation_id"] == original.creation_id
    assert forked.json()["brief"] == "the same, in blue"
    assert api_as(team.viewer).post(f"/api/v1/runs/{original.pk}/rerun").status_code == 403


def test_the_schemas_enums_match_the_models() -> None:
    assert set(get_args(RunStatusName)) == set(RunStatus.values)
    assert set(get_args(VisibilityName)) == set(Visibility.values)


def test_a_run_started_while_the_broker_is_away_is_kept_and_said_to_be_queued(
    team: Team, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broker_down(run_id: int | None = None) -> None:
        raise ConnectionError("Redis is away")

    monkeypatch.setattr("creations.runs.queue.send_wake_up", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        response = start(team)
    assert response.status_code == 201  # the reaper wakes a worker for it later
    assert Run.objects.get(pk=response.json()["id"]).status == RunStatus.QUEUED
