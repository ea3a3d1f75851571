"""The arena in /api/v1: start a comparison, read it (blind: no model named before your vote),
vote once, and read the leaderboard."""

from __future__ import annotations

import json
from typing import Any

import pytest

from creations.arena.models import Comparison, Vote
from creations.models import Run
from tests.support.api import api_as
from tests.support.arena import a_comparison, finish_contestants, team_models
from tests.support.factories import ModelEndpointFactory, WorkspaceFactory
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def test_a_comparison_made_through_the_api_is_two_ordinary_runs_and_names_no_model_until_the_vote(
    team: Team,
) -> None:
    models = team_models(team.workspace, 2)
    client = api_as(team.member)
    made = client.post(
        f"/api/v1/workspaces/{team.workspace.slug}/comparisons",
        {"brief": "A poster for the spring fair", "model_endpoint_ids": [m.pk for m in models], "blind": True},
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["blind"] is True
    assert body["revealed"] is False
    assert [c["letter"] for c in body["contestants"]] == ["A", "B"]
    assert all(c["status"] == "queued" for c in body["contestants"])
    assert Run.objects.filter(creation__model_endpoint__in=models).count() == 2
    for word in (m.name for m in models):
        assert word not in made.content.decode()
    assert all(c["model"] is None and c["run_id"] is None for c in body["contestants"])

    comparison = Comparison.objects.get(pk=body["id"])
    finish_contestants(comparison)
    voted = client.post(f"/api/v1/comparisons/{comparison.pk}/votes", {"winner": "A"})
    assert voted.status_code == 201, voted.content
    after = voted.json()
    assert after["revealed"] is True
    assert after["my_vote"] == "A"
    assert [(c["model"], c["votes"]) for c in after["contestants"]] == [(models[0].name, 1), (models[1].name, 0)]


@pytest.mark.parametrize(
    ("ids", "said"),
    [
        (lambda models, other: [models[0].pk, None], "The demo model cannot take part in a comparison"),
        (lambda models, other: [models[0].pk], "Choose 2 to 4 models to compare; you chose 1."),
        (lambda models, other: [models[0].pk, other.pk], "A model you chose is not one of this workspace's"),
        (lambda models, other: [models[0].pk, models[0].pk], "A model was chosen twice"),
    ],
    ids=["demo", "one", "another-workspace", "twice"],
)
def test_bad_choices_are_refused_saying_why_and_nothing_is_made(team: Team, ids: Any, said: str) -> None:
    models = team_models(team.workspace, 2)
    other = ModelEndpointFactory.create(workspace=WorkspaceFactory.create())
    response = api_as(team.member).post(
        f"/api/v1/workspaces/{team.workspace.slug}/comparisons",
        {"brief": "A poster", "model_endpoint_ids": ids(models, other)},
    )
    assert response.status_code == 422
    assert said in json.dumps(response.json(), ensure_ascii=False)
    assert not Comparison.objects.exists()
    assert not Run.objects.exists()


def test_a_second_vote_is_a_conflict_and_the_first_stands(team: Team) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 2))
    finish_contestants(comparison)
    client = api_as(team.member)
    assert client.post(f"/api/v1/comparisons/{comparison.pk}/votes", {"winner": "tie"}).status_code == 201
    again = client.post(f"/api/v1/comparisons/{comparison.pk}/votes", {"winner": "B"})
    assert again.status_code == 409
    assert "a vote is final" in again.json()["detail"]
    assert Vote.objects.get().winner is None


def test_a_vote_before_every_contestant_has_ended_is_a_conflict(team: Team) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 2))
    response = api_as(team.member).post(f"/api/v1/comparisons/{comparison.pk}/votes", {"winner": "A"})
    assert response.status_code == 409
    assert "still going" in response.json()["detail"]


def test_the_leaderboard_ranks_the_voted_models_with_intervals(team: Team) -> None:
    first, second = team_models(team.workspace, 2)
    comparison = a_comparison(team.workspace, team.owner, [first, second])
    finish_contestants(comparison)
    for person in (team.owner, team.member):
        api_as(person).post(f"/api/v1/comparisons/{comparison.pk}/votes", {"winner": "B"})

    response = api_as(team.viewer).get(f"/api/v1/workspaces/{team.workspace.slug}/leaderboard")
    assert response.status_code == 200
    body = response.json()
    assert body["votes"] == 2
    overall, image = body["boards"]
    assert (overall["kind"], image["kind"]) == ("overall", "image")
    assert [s["model"] for s in overall["standings"]] == [second.name, first.name]
    top = overall["standings"][0]
    assert (top["votes"], top["wins"], top["ties"], top["losses"]) == (2, 2, 0, 0)
    assert top["low"] <= top["rating"] <= top["high"]


def test_a_comparison_is_cancelled_as_a_whole_through_the_api_by_who_made_it(team: Team) -> None:
    comparison = a_comparison(team.workspace, team.member, team_models(team.workspace, 2))
    url = f"/api/v1/comparisons/{comparison.pk}/cancel"

    refused = api_as(team.viewer).post(url, {})
    assert refused.status_code == 403, refused.content
    assert not Run.objects.exclude(status="queued").exists()

    cancelled = api_as(team.member).post(url, {})
    assert cancelled.status_code == 202, cancelled.content
    assert [c["status"] for c in cancelled.json()["contestants"]] == ["cancelled", "cancelled"]
    assert cancelled.json()["all_final"] is True

    again = api_as(team.owner).post(url, {})
    assert again.status_code == 409
    assert "nothing to cancel" in again.json()["detail"]
