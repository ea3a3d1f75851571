"""'Compare models' on the new-creation form: one brief, two to four of the workspace's models,
each an ordinary run; bad choices come back as form errors with nothing made."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from creations.arena.models import Comparison, Contestant
from creations.models import Creation, Run, RunStatus
from tests.support.arena import team_models
from tests.support.factories import ModelEndpointFactory, WorkspaceFactory
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in

pytestmark = pytest.mark.django_db


def _compare(client: Client, team: Team, models: list[str], **more: Any) -> Any:
    data = {"brief": "A poster for the spring fair", "visibility": "workspace", "action": "compare"}
    return client.post(reverse("creation_new", args=[team.workspace.slug]), {**data, "compare_models": models, **more})


def test_two_models_make_one_comparison_of_two_ordinary_runs_with_the_same_brief_and_inputs(
    team: Team, client: Client
) -> None:
    first, second = team_models(team.workspace, 2)
    stops = SimpleUploadedFile("stops.csv", b"name,lat\nA,1\n", content_type="text/csv")
    response = _compare(
        signed_in(client, team.member), team, [str(first.pk), str(second.pk)], blind="on", uploads=stops
    )

    comparison = Comparison.objects.get()
    assert response.status_code == 302
    assert response["Location"] == comparison.get_absolute_url()
    assert comparison.blind
    contestants = list(comparison.contestants.select_related("creation", "run"))
    assert [c.model_endpoint_id for c in contestants] == [first.pk, second.pk]
    assert [c.letter for c in contestants] == ["A", "B"]
    for contestant in contestants:
        assert contestant.creation.brief == "A poster for the spring fair"
        assert contestant.creation.author == team.member
        assert contestant.creation.model_endpoint_id == contestant.model_endpoint_id
        assert contestant.run.status == RunStatus.QUEUED
        assert contestant.run.started_by == team.member
        inputs = list(contestant.creation.inputs.all())
        assert [i.name for i in inputs] == ["stops.csv"]
        with inputs[0].file.open("rb") as handle:
            assert handle.read() == b"name,lat\nA,1\n"


def test_the_form_offers_the_workspaces_models_to_compare_and_says_the_demo_cannot_take_part(
    team: Team, client: Client
) -> None:
    team_models(team.workspace, 2)
    page = html.unescape(
        signed_in(client, team.member).get(reverse("creation_new", args=[team.workspace.slug])).content.decode()
    )
    assert "Compare models" in page
    assert "Quillfeather-7" in page
    assert "Brassmoth-2" in page
    assert "The demo model cannot take part" in page


@pytest.mark.parametrize(
    ("choose", "said"),
    [
        (lambda models, other: [str(models[0].pk)], "Choose 2 to 4 models to compare; you chose 1."),
        (lambda models, other: [str(m.pk) for m in models], "Choose 2 to 4 models to compare; you chose 5."),
        (lambda models, other: [str(models[0].pk), str(models[0].pk)], "A model was chosen twice"),
        (
            lambda models, other: [str(models[0].pk), str(other.pk)],
            "A model you chose is not one of this workspace's",
        ),
        (lambda models, other: [str(models[0].pk), "demo"], "The demo model cannot take part in a comparison"),
    ],
    ids=["one", "five", "twice", "another-workspace", "demo"],
)
def test_bad_choices_get_a_form_error_and_nothing_is_made(team: Team, client: Client, choose: Any, said: str) -> None:
    models = team_models(team.workspace, 5)
    other = ModelEndpointFactory.create(workspace=WorkspaceFactory.create(), name="Elsewhere-9")
    response = _compare(signed_in(client, team.member), team, choose(models, other))

    page = html.unescape(response.content.decode())
    assert response.status_code == 400
    assert 'data-role="compare-errors"' in page
    assert said in page
    assert "A poster for the spring fair</textarea>" in page
    assert not Comparison.objects.exists()
    assert not Contestant.objects.exists()
    assert not Creation.objects.exists()
    assert not Run.objects.exists()


def test_a_full_queue_refuses_the_whole_comparison_not_half_of_it(team: Team, client: Client, settings: Any) -> None:
    """Each contestant passes the same admission as any run: the queue's room is counted per run."""
    settings.RUN_QUEUED_MAX_PER_WORKSPACE = 1
    first, second = team_models(team.workspace, 2)
    response = _compare(signed_in(client, team.member), team, [str(first.pk), str(second.pk)])

    assert response.status_code == 429
    assert not Comparison.objects.exists()
    assert not Run.objects.exists()


def test_a_viewer_cannot_start_a_comparison(team: Team, client: Client) -> None:
    first, second = team_models(team.workspace, 2)
    response = _compare(signed_in(client, team.viewer), team, [str(first.pk), str(second.pk)])
    assert response.status_code == 403
    assert not Comparison.objects.exists()
