"""Starting a run through the API with earlier artifacts as inputs (`artifact_ids`)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from api.models import StagedInput
from creations.models import Artifact, Creation, Run, Visibility
from tests.support.api import api_as
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

SONG = b"MThd\x00\x00\x00\x06\x00\x00\x00\x01\x01\xe0" + b"\x00" * 64


def _artifact(team: Team, visibility: str = Visibility.WORKSPACE) -> Artifact:
    run = finished_run(
        workspace=team.workspace, author=team.member, outputs=[Output("song.mid", SONG)], visibility=visibility
    )
    return run.artifacts.get()


def _start(user: Any, slug: str, **body: Any) -> Any:
    return api_as(user).post(f"/api/v1/workspaces/{slug}/runs", {"brief": "the same tune, slower", **body})


def test_a_run_starts_with_an_artifact_beside_an_uploaded_input(team: Team) -> None:
    artifact = _artifact(team)
    client = api_as(team.owner)
    staged = client.post(
        f"/api/v1/workspaces/{team.workspace.slug}/inputs",
        {"files": [SimpleUploadedFile("song.mid", b"MThd-mine")]},
        multipart=True,
    )
    assert staged.status_code == 201, staged.content
    response = _start(team.owner, team.workspace.slug, input_ids=[staged.json()[0]["id"]], artifact_ids=[artifact.pk])
    assert response.status_code == 201, response.content
    creation = Creation.objects.get(pk=response.json()["creation_id"])
    assert {f.name: f.file.read() for f in creation.inputs.all()} == {"song.mid": b"MThd-mine", "song (2).mid": SONG}
    assert not StagedInput.objects.exists()


def test_a_public_artifact_goes_into_the_callers_own_workspace(team: Team) -> None:
    artifact = _artifact(team, Visibility.PUBLIC)
    mine = Workspace.objects.get(memberships__user=team.outsider, is_personal=True)
    response = _start(team.outsider, mine.slug, artifact_ids=[artifact.pk])
    assert response.status_code == 201, response.content
    assert response.json()["workspace"] == mine.slug
    assert Creation.objects.get(pk=response.json()["creation_id"]).inputs.get().file.read() == SONG


@pytest.mark.parametrize("visibility", [Visibility.WORKSPACE, Visibility.PRIVATE])
def test_an_artifact_the_caller_may_not_see_is_a_422_like_a_missing_one(team: Team, visibility: str) -> None:
    artifact = _artifact(team, visibility)
    caller = team.outsider if visibility == Visibility.WORKSPACE else team.owner  # the owner: not the author
    slug = Workspace.objects.get(memberships__user=caller, is_personal=True).slug
    answers = [_start(caller, slug, artifact_ids=[pk]) for pk in (artifact.pk, artifact.pk + 1000)]
    assert [a.status_code for a in answers] == [422, 422]
    assert answers[0]["Content-Type"] == "application/problem+json"
    hidden, missing = (a.json()["errors"] for a in answers)
    assert [e["field"] for e in hidden] == ["artifact_ids"]
    assert hidden[0]["message"].replace(str(artifact.pk), "?") == missing[0]["message"].replace(
        str(artifact.pk + 1000), "?"
    )
    assert Run.objects.count() == 1  # the artifact's own


def test_artifacts_count_against_the_input_limits(team: Team, settings: Any) -> None:
    settings.UPLOAD_MAX_FILE_BYTES = len(SONG) - 1
    response = _start(team.member, team.workspace.slug, artifact_ids=[_artifact(team).pk])
    assert response.status_code == 422
    assert "song.mid: too large" in response.json()["detail"]
