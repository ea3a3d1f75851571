"""A comparison's page: the contestants' files side by side from the artifact origin, their status
while they run, the vote (one per person, final; viewers watch), and blind comparisons that name
no model until the person has voted."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from creations.arena.models import Vote
from tests.support.arena import MODEL_NAMES, a_comparison, finish_contestants, team_models
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in

pytestmark = pytest.mark.django_db


def _page(client: Client, comparison: Any) -> tuple[int, str]:
    response = client.get(comparison.get_absolute_url())
    return response.status_code, html.unescape(response.content.decode())


def _vote(client: Client, comparison: Any, winner: str) -> Any:
    return client.post(reverse("comparison_vote", args=[comparison.pk]), {"winner": winner})


def _names_in(page: str, models: list[Any]) -> list[str]:
    return [word for m in models for word in (m.name, m.model) if word in page]


def test_a_blind_comparison_names_no_model_until_the_person_has_voted(team: Team, client: Client) -> None:
    models = team_models(team.workspace, 2)
    comparison = a_comparison(team.workspace, team.owner, models, blind=True)
    finish_contestants(comparison)
    member = signed_in(client, team.member)

    status, before = _page(member, comparison)
    assert status == 200
    assert _names_in(before, models) == []
    assert 'data-contestant="A"' in before
    assert 'data-contestant="B"' in before
    # Nor a link to a contestant's creation or run, whose pages name the model.
    for contestant in comparison.contestants.all():
        assert contestant.creation.get_absolute_url() not in before
        assert reverse("run_detail", args=[contestant.run_id]) not in before

    voted = _vote(member, comparison, "B")
    assert voted.status_code == 302

    _, after = _page(member, comparison)
    assert _names_in(after, models) == [models[0].name, models[0].model, models[1].name, models[1].model]
    assert f"You voted for B ({models[1].name})" in after

    # Someone who has not voted still sees letters only.
    _, owners = _page(signed_in(Client(), team.owner), comparison)
    assert _names_in(owners, models) == []


def test_an_open_comparison_names_its_models_from_the_start(team: Team, client: Client) -> None:
    models = team_models(team.workspace, 3)
    comparison = a_comparison(team.workspace, team.owner, models, blind=False)
    _, page = _page(signed_in(client, team.member), comparison)
    assert all(name in page for name in MODEL_NAMES[:3])


def test_the_contestants_files_come_side_by_side_from_the_artifact_origin(
    team: Team, client: Client, settings: Any
) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 2))
    finish_contestants(comparison)
    _, page = _page(signed_in(client, team.member), comparison)
    pictures = page.count(f'<img class="artifact-image" src="{settings.ARTIFACT_ORIGIN}/r/')
    assert pictures == 2


def test_while_contestants_run_the_page_looks_again_and_stops_once_all_have_ended(team: Team, client: Client) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 2))
    member = signed_in(client, team.member)

    _, running = _page(member, comparison)
    assert 'hx-trigger="load delay:2s"' in running
    assert running.count('data-role="contestant-pending"') == 2
    assert "Vote once every model has finished." in running
    assert _vote(member, comparison, "A").status_code == 400
    assert not Vote.objects.exists()

    finish_contestants(comparison)
    _, ended = _page(member, comparison)
    assert "hx-trigger" not in ended
    assert ended.count(">Succeeded<") == 2
    assert 'name="winner" value="tie"' in ended


def test_one_vote_per_person_a_second_is_refused_and_the_first_stands(team: Team, client: Client) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 2))
    finish_contestants(comparison)
    member = signed_in(client, team.member)

    assert _vote(member, comparison, "tie").status_code == 302
    again = _vote(member, comparison, "A")
    page = html.unescape(again.content.decode())
    assert again.status_code == 400
    assert "You have already voted on this comparison; a vote is final." in page
    vote = Vote.objects.get()
    assert vote.voter == team.member
    assert vote.winner is None
    # The database holds the rule too, whatever code writes.
    with pytest.raises(IntegrityError), transaction.atomic():
        Vote.objects.create(comparison=comparison, voter=team.member, winner=comparison.contestants.first())


def test_viewers_see_the_comparison_but_cannot_vote(team: Team, client: Client) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 2))
    finish_contestants(comparison)
    viewer = signed_in(client, team.viewer)

    status, page = _page(viewer, comparison)
    assert status == 200
    assert 'data-role="vote-refused"' in page
    assert 'name="winner"' not in page
    refused = _vote(viewer, comparison, "A")
    assert refused.status_code == 403
    assert "Only owners, admins and members of this workspace can vote" in html.unescape(refused.content.decode())
    assert not Vote.objects.exists()


def test_outsiders_are_told_no_such_comparison(team: Team, client: Client) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 2))
    outsider = signed_in(client, team.outsider)
    assert outsider.get(comparison.get_absolute_url()).status_code == 404
    assert _vote(outsider, comparison, "A").status_code == 404


def test_a_choice_that_is_no_contestant_is_refused_saying_so(team: Team, client: Client) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 2))
    finish_contestants(comparison)
    response = _vote(signed_in(client, team.member), comparison, "D")
    assert response.status_code == 400
    assert "Choose the best one, or a tie, then vote." in html.unescape(response.content.decode())
    assert not Vote.objects.exists()
