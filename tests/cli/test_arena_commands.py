"""`atelier compare`, `atelier vote` and `atelier leaderboard` against the platform's real API in
this process: models chosen by name or id, blind comparisons that name no model until the vote,
refusals said as the platform says them, and the leaderboard as a table or the API's own JSON."""

from __future__ import annotations

import pytest

from api.schemas.arena import BoardOut, ComparisonOut, ContestantOut, LeaderboardOut, StandingOut
from atelier_cli.commands import arena
from atelier_cli.exit_status import ExitStatus
from creations.arena.models import Comparison
from creations.models import Run
from tests.cli.running import Atelier
from tests.support.api import token_for
from tests.support.arena import finish_contestants, team_models
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def test_the_client_checks_only_fields_the_api_sends() -> None:
    assert set(arena.Comparison.model_fields) <= set(ComparisonOut.model_fields)
    assert set(arena.Contestant.model_fields) <= set(ContestantOut.model_fields)
    assert set(arena.Leaderboard.model_fields) <= set(LeaderboardOut.model_fields)
    assert set(arena.Board.model_fields) <= set(BoardOut.model_fields)
    assert set(arena.Standing.model_fields) <= set(StandingOut.model_fields)


def test_compare_by_name_and_id_vote_and_read_the_leaderboard(atelier_on_platform: Atelier, team: Team) -> None:
    first, second = team_models(team.workspace, 2)
    member = token_for(team.member)
    made = atelier_on_platform(
        "compare", "--model", first.name, "--model", str(second.pk), "--workspace", team.workspace.slug,
        "--blind", "A poster for the spring fair", token=member,
    )  # fmt: skip
    assert made.status == 0, made.err
    comparison = Comparison.objects.get()
    lines = made.out.splitlines()
    assert lines[0] == (
        f"Comparison {comparison.pk} in {team.workspace.slug} (blind: the models are named once you have voted): "
        f"http://testserver/comparisons/{comparison.pk}/"
    )
    assert [line.split() for line in lines[1:]] == [["A", "queued"], ["B", "queued"]]
    assert first.name not in made.out
    assert second.name not in made.out
    assert [c.model_endpoint_id for c in comparison.contestants.all()] == [first.pk, second.pk]

    finish_contestants(comparison)
    voted = atelier_on_platform("vote", str(comparison.pk), "B", token=member)
    assert voted.status == 0, voted.err
    assert [line.split() for line in voted.out.splitlines()[1:]] == [
        ["A", "succeeded", first.name],
        ["B", "succeeded", second.name],
        ["You", "voted", "for", "B."],
    ]

    table = atelier_on_platform("leaderboard", "--workspace", team.workspace.slug, token=member)
    assert table.status == 0, table.err
    rows = table.out.splitlines()
    assert rows[0] == f"{team.workspace.slug}: 1 vote"
    assert rows[2] == "Overall"
    assert rows[4].split()[0] == "1"
    assert rows[4].split()[-1] == second.name
    assert rows[5].split()[-1] == first.name
    as_json = atelier_on_platform("leaderboard", "--workspace", team.workspace.slug, "--json", token=member)
    assert [b["kind"] for b in as_json.document()["boards"]] == ["overall", "image"]


def test_the_demo_model_is_refused_with_the_reason(atelier_on_platform: Atelier, team: Team) -> None:
    first, _ = team_models(team.workspace, 2)
    outcome = atelier_on_platform(
        "compare", "--model", first.name, "--model", "demo", "--workspace", team.workspace.slug, "--json", "A poster",
        token=token_for(team.member),
    )  # fmt: skip
    assert outcome.status == ExitStatus.REFUSED
    assert "The demo model cannot take part in a comparison" in outcome.error()["message"]
    assert not Run.objects.exists()


def test_a_name_the_workspace_does_not_have_is_a_usage_error_naming_its_models(
    atelier_on_platform: Atelier, team: Team
) -> None:
    team_models(team.workspace, 2)
    outcome = atelier_on_platform(
        "compare", "--model", "Nonesuch", "--model", "Brassmoth-2", "--workspace", team.workspace.slug, "A poster",
        token=token_for(team.member),
    )  # fmt: skip
    assert outcome.status == ExitStatus.USAGE
    assert "No model called “Nonesuch”" in outcome.err
    assert "its models: Brassmoth-2, Quillfeather-7." in outcome.err
    assert not Comparison.objects.exists()


def test_a_viewer_may_not_vote(atelier_on_platform: Atelier, team: Team) -> None:
    first, second = team_models(team.workspace, 2)
    atelier_on_platform(
        "compare", "--model", str(first.pk), "--model", str(second.pk), "--workspace", team.workspace.slug, "A poster",
        token=token_for(team.member),
    )  # fmt: skip
    comparison = Comparison.objects.get()
    finish_contestants(comparison)
    outcome = atelier_on_platform("vote", str(comparison.pk), "A", "--json", token=token_for(team.viewer))
    assert outcome.status == ExitStatus.FORBIDDEN
    assert outcome.error()["message"].startswith("Only owners, admins and members of this workspace can vote")
