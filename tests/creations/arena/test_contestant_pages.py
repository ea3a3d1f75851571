"""A contestant's own pages, its creation's and its run's: while its comparison is blind they name
no model to anyone who has not voted in it (who made the comparison included), saying where the
name is told; once the person has voted, or when the comparison is open, the model is named."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Creation, Visibility
from tests.support.arena import a_comparison, finish_contestants, team_models
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in

pytestmark = pytest.mark.django_db
HIDDEN = "hidden until you vote in its comparison"


def _pages(client: Client, contestant: Any) -> list[str]:
    return [
        html.unescape(client.get(url).content.decode())
        for url in (contestant.creation.get_absolute_url(), reverse("run_detail", args=[contestant.run_id]))
    ]


def _named(page: str, model: Any) -> bool:
    return model.name in page or model.model in page


def test_a_blind_contestants_pages_name_its_model_only_once_the_person_has_voted(team: Team, client: Client) -> None:
    models = team_models(team.workspace, 2)
    comparison = a_comparison(team.workspace, team.owner, models, blind=True)
    finish_contestants(comparison)
    contestant = comparison.contestants.get(position=0)
    member = signed_in(client, team.member)
    link = f'href="{comparison.get_absolute_url()}" data-role="model-hidden">{HIDDEN}</a>'

    for page in _pages(member, contestant):
        assert not _named(page, models[0])
        assert link in page
    # Who made the comparison has not voted either: the same.
    for page in _pages(signed_in(Client(), team.owner), contestant):
        assert not _named(page, models[0])
        assert link in page

    assert member.post(reverse("comparison_vote", args=[comparison.pk]), {"winner": "A"}).status_code == 302
    for page in _pages(member, contestant):
        assert models[0].name in page
        assert HIDDEN not in page
    for page in _pages(signed_in(Client(), team.owner), contestant):
        assert not _named(page, models[0])


def test_an_open_comparisons_contestants_name_their_model(team: Team, client: Client) -> None:
    models = team_models(team.workspace, 2)
    comparison = a_comparison(team.workspace, team.owner, models, blind=False)
    contestant = comparison.contestants.get(position=1)
    for page in _pages(signed_in(client, team.member), contestant):
        assert models[1].name in page
        assert HIDDEN not in page


def test_outsiders_of_a_public_blind_contestant_get_no_model_and_no_link_they_could_not_open(
    team: Team, client: Client
) -> None:
    models = team_models(team.workspace, 2)
    comparison = a_comparison(team.workspace, team.owner, models, blind=True)
    finish_contestants(comparison)
    contestant = comparison.contestants.get(position=0)
    Creation.objects.filter(pk=contestant.creation_id).update(visibility=Visibility.PUBLIC)
    for page in _pages(signed_in(client, team.outsider), contestant):
        assert not _named(page, models[0])
        assert "Model hidden while its comparison is blind" in page
        assert comparison.get_absolute_url() not in page


def test_a_contestants_creation_page_links_back_to_its_comparison_for_the_workspaces_members(
    team: Team, client: Client
) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 3), blind=True)
    contestant = comparison.contestants.get(position=2)
    page = html.unescape(signed_in(client, team.viewer).get(contestant.creation.get_absolute_url()).content.decode())
    assert f'<a href="{comparison.get_absolute_url()}">One of 3 in a comparison</a>, as C' in page

    Creation.objects.filter(pk=contestant.creation_id).update(visibility=Visibility.PUBLIC)
    outsiders = signed_in(Client(), team.outsider).get(contestant.creation.get_absolute_url())
    assert outsiders.status_code == 200
    assert "in a comparison" not in html.unescape(outsiders.content.decode())
