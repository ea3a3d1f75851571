"""A blind comparison's contestants name no model, to whoever has not voted in it, anywhere
else either: the run API (one run, the list, what a fork answers), the usage export, the
gallery's model filter and a fork's own page. Once the person has voted, each names it."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import Client
from django.urls import reverse

from creations.arena.models import Comparison, Contestant
from creations.arena.selectors import reason_shown
from creations.models import Creation, Run
from creations.runs.services import creation_fork
from tests.support.api import api_as
from tests.support.arena import a_comparison, finish_contestants, team_models
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in
from workspaces.models import ModelEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def blind(team: Team) -> tuple[Comparison, Contestant, ModelEndpoint]:
    """A finished blind comparison of two models, and its contestant A with A's model."""
    models = team_models(team.workspace, 2)
    comparison = a_comparison(team.workspace, team.owner, models, blind=True)
    finish_contestants(comparison)
    return comparison, comparison.contestants.get(position=0), models[0]


def _vote(client: Client, comparison: Comparison) -> None:
    assert client.post(reverse("comparison_vote", args=[comparison.pk]), {"winner": "A"}).status_code == 302


async def _body(response: Any) -> bytes:
    return b"".join([chunk async for chunk in response.streaming_content])


def _named(text: str, model: ModelEndpoint) -> bool:
    return model.name in text or model.model in text


def test_the_run_api_names_a_blind_contestants_model_only_after_your_vote(team: Team, blind: Any) -> None:
    comparison, contestant, model = blind
    api = api_as(team.member)
    one = api.get(f"/api/v1/runs/{contestant.run_id}")
    listed = api.get(f"/api/v1/runs?workspace={team.workspace.slug}")
    for response in (one, listed):
        assert response.status_code == 200
        assert not _named(response.content.decode(), model)
    assert (one.json()["model"], one.json()["model_endpoint_id"], one.json()["model_hidden"]) == (None, None, True)
    assert all(run["model_hidden"] for run in listed.json()["results"])

    _vote(signed_in(Client(), team.member), comparison)
    after = api.get(f"/api/v1/runs/{contestant.run_id}").json()
    assert (after["model"], after["model_endpoint_id"], after["model_hidden"]) == (model.name, model.pk, False)
    assert model.name in api.get(f"/api/v1/runs?workspace={team.workspace.slug}").content.decode()
    # Who has not voted is still told nothing.
    assert not _named(api_as(team.owner).get(f"/api/v1/runs/{contestant.run_id}").content.decode(), model)


def test_a_reason_naming_the_endpoint_names_it_only_after_your_vote(team: Team, blind: Any, client: Client) -> None:
    comparison, contestant, model = blind
    Run.objects.filter(pk=contestant.run_id).update(reason=f"The model endpoint “{model.name}” is disabled.")
    body = api_as(team.member).get(f"/api/v1/runs/{contestant.run_id}")
    assert not _named(body.content.decode(), model)
    assert body.json()["reason"] == "The model endpoint “(hidden)” is disabled."
    member = signed_in(client, team.member)
    pages = [reverse("run_detail", args=[contestant.run_id]), contestant.creation.get_absolute_url()]
    export: Any = member.get(reverse("run_trajectory_json", args=[contestant.run_id]))
    exported = json.loads(async_to_sync(_body)(export))
    assert exported["run"]["reason"] == "The model endpoint “(hidden)” is disabled."
    for url in pages:
        page = html.unescape(member.get(url).content.decode())
        assert not _named(page, model)
        assert "The model endpoint “(hidden)” is disabled." in page

    _vote(member, comparison)
    for url in pages:
        assert f"The model endpoint “{model.name}” is disabled." in html.unescape(member.get(url).content.decode())


def test_a_fork_of_a_blind_contestant_hides_its_model_too(team: Team, blind: Any, client: Client) -> None:
    comparison, contestant, model = blind
    forked = api_as(team.member).post(f"/api/v1/runs/{contestant.run_id}/fork", {"brief": "The same, in red"})
    assert forked.status_code == 201, forked.content
    assert not _named(forked.content.decode(), model)
    assert forked.json()["model_hidden"] is True
    member = signed_in(client, team.member)
    page = html.unescape(member.get(reverse("creation_detail", args=[forked.json()["creation_id"]])).content.decode())
    assert not _named(page, model)
    assert "Model hidden while the comparison it was forked from is blind" in page

    _vote(member, comparison)
    page = html.unescape(member.get(reverse("creation_detail", args=[forked.json()["creation_id"]])).content.decode())
    assert model.name in page


def test_a_fork_made_with_another_model_is_not_hidden(team: Team, blind: Any) -> None:
    contestant = blind[1]
    fork = creation_fork(creation=contestant.creation, user=team.member, brief="Again").creation
    fork.model_endpoint = None  # the demo model: a model of its own, nothing to hide
    fork.save(update_fields=["model_endpoint"])
    run = fork.runs.get()
    assert api_as(team.member).get(f"/api/v1/runs/{run.pk}").json()["model_hidden"] is False


def _csv_models(client: Client, team: Team) -> list[str]:
    response: Any = client.get(reverse("workspace_usage_csv", args=[team.workspace.slug]))
    assert response.status_code == 200
    rows = csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode()))
    return sorted(row["model"] for row in rows)


def test_the_usage_export_names_a_blind_contestants_model_only_after_your_vote(
    team: Team, blind: Any, client: Client
) -> None:
    comparison, _, model = blind
    member = signed_in(client, team.member)
    assert _csv_models(member, team) == ["hidden until you vote", "hidden until you vote"]
    _vote(member, comparison)
    assert model.model in _csv_models(member, team)
    assert _csv_models(signed_in(Client(), team.owner), team) == ["hidden until you vote", "hidden until you vote"]


def _tiles(client: Client, team: Team, model: ModelEndpoint) -> int:
    response = client.get(reverse("workspace_gallery", args=[team.workspace.slug]), {"model": model.model})
    assert response.status_code == 200
    return len(re.findall(r"<strong>poster.png</strong>", response.content.decode()))


def test_the_gallerys_model_filter_finds_a_blind_contestant_only_after_your_vote(
    team: Team, blind: Any, client: Client
) -> None:
    comparison, _, model = blind
    member = signed_in(client, team.member)
    assert _tiles(member, team, model) == 0
    _vote(member, comparison)
    assert _tiles(member, team, model) == 1
    assert _tiles(signed_in(Client(), team.owner), team, model) == 0


def test_an_open_comparisons_runs_name_their_model_everywhere(team: Team, client: Client) -> None:
    models = team_models(team.workspace, 2)
    comparison = a_comparison(team.workspace, team.owner, models, blind=False)
    finish_contestants(comparison)
    contestant = comparison.contestants.get(position=0)
    assert api_as(team.member).get(f"/api/v1/runs/{contestant.run_id}").json()["model"] == models[0].name
    member = signed_in(client, team.member)
    assert models[0].model in _csv_models(member, team)
    assert _tiles(member, team, models[0]) == 1


def test_a_hidden_reason_stays_readable_when_an_endpoint_has_no_model_name() -> None:
    endpoint = ModelEndpoint(name="Rival", model="")
    run = Run(reason="The model endpoint “Rival” is disabled.")
    run.creation = Creation(model_endpoint=endpoint)

    assert reason_shown(run=run, model_hidden=True) == "The model endpoint “(hidden)” is disabled."
    assert reason_shown(run=run, model_hidden=False) == "The model endpoint “Rival” is disabled."


def test_a_fork_of_a_fork_of_a_blind_contestant_hides_its_model_too(team: Team, blind: Any, client: Client) -> None:
    comparison, contestant, model = blind
    fork = creation_fork(creation=contestant.creation, user=team.member, brief="The same, in red").creation
    grandchild = creation_fork(creation=fork, user=team.member, brief="The same, in blue").creation
    great = creation_fork(creation=grandchild, user=team.member, brief="The same, in green").creation
    runs = [creation.runs.get() for creation in (grandchild, great)]
    api = api_as(team.member)
    listed = api.get(f"/api/v1/runs?workspace={team.workspace.slug}")
    assert not _named(listed.content.decode(), model)
    for run in runs:
        one = api.get(f"/api/v1/runs/{run.pk}")
        assert not _named(one.content.decode(), model)
        assert one.json()["model_hidden"] is True
    member = signed_in(client, team.member)
    page = html.unescape(member.get(great.get_absolute_url()).content.decode())
    assert not _named(page, model)

    _vote(member, comparison)
    for run in runs:
        assert api.get(f"/api/v1/runs/{run.pk}").json()["model"] == model.name
    assert model.name in html.unescape(member.get(great.get_absolute_url()).content.decode())
    # Who has not voted is still told nothing.
    assert api_as(team.owner).get(f"/api/v1/runs/{runs[-1].pk}").json()["model_hidden"] is True


def test_a_fork_of_a_fork_that_changed_its_model_is_not_hidden(team: Team, blind: Any) -> None:
    fork = creation_fork(creation=blind[1].creation, user=team.member, brief="Again").creation
    fork.model_endpoint = None  # the demo model: a model of its own, nothing to hide
    fork.save(update_fields=["model_endpoint"])
    grandchild = creation_fork(creation=fork, user=team.member, brief="Once more").creation
    assert grandchild.model_endpoint_id is None
    assert api_as(team.member).get(f"/api/v1/runs/{grandchild.runs.get().pk}").json()["model_hidden"] is False


@pytest.mark.parametrize(
    ("name", "reason", "shown"),
    [
        # A one-letter name is a word of its own, not that letter wherever it appears.
        ("e", "The model endpoint “e” is disabled.", "The model endpoint “(hidden)” is disabled."),
        ("Rival", "Rivalry aside, “Rival” is disabled.", "Rivalry aside, “(hidden)” is disabled."),
        # A name that ends in a sign is found before a word character too.
        ("gpt (fast)", "“gpt (fast)”s key is unreadable.", "“(hidden)”s key is unreadable."),
        ("a.b", "The model a.b and axb differ.", "The model (hidden) and axb differ."),
    ],
)
def test_a_hidden_reason_replaces_only_the_whole_name(name: str, reason: str, shown: str) -> None:
    run = Run(reason=reason)
    run.creation = Creation(model_endpoint=ModelEndpoint(name=name, model=""))

    assert reason_shown(run=run, model_hidden=True) == shown
    assert reason_shown(run=run, model_hidden=False) == reason
