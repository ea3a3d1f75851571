"""The workspace's leaderboard: models ranked from the members' votes, overall and per kind of file
the comparisons made, with vote counts and an interval; viewers read it, outsiders never."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from creations.arena.models import Comparison
from creations.arena.selectors import workspace_leaderboard
from creations.arena.services import vote_cast
from tests.support.arena import a_comparison, finish_contestants, team_models
from tests.support.artifacts import Output
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in

pytestmark = pytest.mark.django_db

PAGE = Output("index.html", b"<!doctype html><title>Fair</title><h1>Spring fair</h1>")


def _votes(team: Team, comparison: Comparison, winners: list[str | None]) -> None:
    contestants = {c.letter: c for c in comparison.contestants.all()}
    for voter, letter in zip((team.owner, team.member), winners, strict=False):
        vote_cast(comparison=comparison, user=voter, winner=contestants[letter] if letter else None)


def test_the_board_ranks_by_votes_overall_and_per_kind_with_counts_and_intervals(team: Team, client: Client) -> None:
    first, second = team_models(team.workspace, 2)
    pictures: list[list[str | None]] = [["A", "A"], ["A", "A"], ["A", None], ["A", "B"]]
    for winners in pictures:  # pictures: the first model is better
        comparison = a_comparison(team.workspace, team.owner, [first, second])
        finish_contestants(comparison)
        _votes(team, comparison, winners)
    for _ in range(2):  # pages: the second model is better
        comparison = a_comparison(team.workspace, team.owner, [first, second])
        finish_contestants(comparison, outputs=[PAGE])
        _votes(team, comparison, ["B", "B"])

    board = workspace_leaderboard(workspace=team.workspace)
    assert board.votes == 12
    assert [s.name for s in board.overall] == [first.name, second.name]
    top = board.overall[0].rating
    assert (top.votes, top.wins, top.ties, top.losses) == (12, 6, 1, 5)
    assert [(kind, [s.name for s in standings]) for kind, _, standings in board.by_kind] == [
        ("html", [second.name, first.name]),
        ("image", [first.name, second.name]),
    ]

    page = html.unescape(
        signed_in(client, team.viewer)
        .get(reverse("workspace_leaderboard", args=[team.workspace.slug]))
        .content.decode()
    )
    overall = page[page.index('data-role="board-overall"') : page.index('data-role="board-html"')]
    assert overall.index(first.name) < overall.index(second.name)
    assert re.search(
        rf'data-model="{first.name}">.*?>12</td>\s*<td data-label="Won · tied · lost">6 · 1 · 5</td>', overall, re.S
    )
    assert re.search(r">\d{3,4} \u2013 \d{3,4}</td>", overall)
    assert "Web page" in page
    assert "Image" in page


def test_no_votes_says_how_to_start(team: Team, client: Client) -> None:
    response = signed_in(client, team.member).get(reverse("workspace_leaderboard", args=[team.workspace.slug]))
    assert response.status_code == 200
    assert b'data-role="no-votes"' in response.content


def test_outsiders_get_no_leaderboard(team: Team, client: Client) -> None:
    response = signed_in(client, team.outsider).get(reverse("workspace_leaderboard", args=[team.workspace.slug]))
    assert response.status_code == 404
