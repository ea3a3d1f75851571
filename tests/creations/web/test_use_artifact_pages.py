"""The "Use in a new creation" link on every page that shows an artifact, the form with the
artifact attached, and the run it starts."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.template.defaultfilters import filesizeformat
from django.test import Client
from django.urls import reverse

from creations.models import Artifact, Run, Visibility
from tests.support.artifacts import Output
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes
from tests.support.pages import a_run, signed_in
from workspaces.models import Role, Workspace
from workspaces.services import membership_add, workspace_create

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]

POSTER = png_bytes(48, 32)


def _poster(team: Team, **kwargs: Any) -> Artifact:
    outputs = [Output("poster.png", POSTER), Output("scene.glb", b"glTF\x02\x00\x00\x00")]
    return a_run(team, outputs=outputs, **kwargs).artifacts.get(path="poster.png")


def _use_url(artifact: Artifact) -> str:
    return reverse("artifact_use", args=[artifact.pk])


def _new_url(workspace: Workspace, *artifact_ids: int) -> str:
    query = "&".join(f"artifact={pk}" for pk in artifact_ids)
    return f"{reverse('creation_new', args=[workspace.slug])}?{query}"


def _personal(user: Any) -> Workspace:
    return Workspace.objects.get(memberships__user=user, is_personal=True)


def test_the_artifact_page_the_creation_page_and_the_gallery_offer_the_link(team: Team, client: Client) -> None:
    artifact = _poster(team)
    glb = Artifact.objects.get(path="scene.glb")
    signed_in(client, team.member)
    pages = [
        reverse("artifact_detail", args=[artifact.pk]),
        reverse("creation_detail", args=[artifact.run.creation_id]),
        reverse("run_artifacts", args=[artifact.run_id]),
        reverse("workspace_gallery", args=[team.workspace.slug]),
    ]
    for page in pages:
        html = client.get(page).content.decode()
        assert f'href="{_use_url(artifact)}"' in html, page
        assert "Use in a new creation" in html
        assert f'href="{_use_url(glb)}"' not in html, page  # a type the upload rules refuse: no link


def test_a_member_is_taken_to_the_form_of_the_artifacts_workspace(team: Team, client: Client) -> None:
    artifact = _poster(team)
    response = signed_in(client, team.member).get(_use_url(artifact))
    assert response.status_code == 302
    assert response["Location"] == _new_url(team.workspace, artifact.pk)


def test_a_viewer_is_taken_to_a_workspace_where_they_may_start_runs(team: Team, client: Client) -> None:
    artifact = _poster(team)
    response = signed_in(client, team.viewer).get(_use_url(artifact))
    assert response["Location"] == _new_url(_personal(team.viewer), artifact.pk)


@pytest.mark.parametrize("visibility", [Visibility.WORKSPACE, Visibility.PRIVATE])
def test_who_may_not_see_the_artifact_is_told_it_does_not_exist(team: Team, client: Client, visibility: str) -> None:
    artifact = _poster(team, visibility=visibility)
    stranger = team.outsider if visibility == Visibility.WORKSPACE else team.member  # the author is the owner
    assert signed_in(client, stranger).get(_use_url(artifact)).status_code == 404


def test_the_form_shows_the_attached_file_with_a_way_to_remove_it(team: Team, client: Client) -> None:
    artifact = _poster(team)
    other = workspace_create(name="Side project", owner=team.outsider)
    membership_add(workspace=other, user=team.member, role=Role.MEMBER)
    html = signed_in(client, team.member).get(_new_url(team.workspace, artifact.pk)).content.decode()
    assert f'<input type="hidden" name="artifacts" value="{artifact.pk}">' in html
    assert f">poster.png</a> · {filesizeformat(len(POSTER))}" in html  # name and size
    assert '<span class="kind-tag kind-image">Image</span>' in html
    assert f'href="{reverse("creation_new", args=[team.workspace.slug])}" data-remove-attachment' in html
    assert f'href="{_new_url(other, artifact.pk)}">Side project</a>' in html  # or start it elsewhere
    assert "not shared with you" not in html


def test_an_artifact_one_may_not_see_is_left_out_without_a_word_of_it(team: Team, client: Client) -> None:
    hidden = _poster(team, visibility=Visibility.PRIVATE)
    html = signed_in(client, team.member).get(_new_url(team.workspace, hidden.pk, 10**9)).content.decode()
    assert "not found, or is not shared with you" in html
    assert "poster.png" not in html
    assert 'name="artifacts"' not in html
    garbled = signed_in(client, team.member).get(f"{_new_url(team.workspace)}artifact=poster").content.decode()
    assert "not found, or is not shared with you" in garbled


def test_submitting_starts_a_run_whose_inputs_hold_the_artifacts_bytes(team: Team, client: Client) -> None:
    artifact = _poster(team)
    response = signed_in(client, team.member).post(
        reverse("creation_new", args=[team.workspace.slug]),
        {
            "brief": "The same poster, with a border",
            "visibility": "workspace",
            "model": "",
            "artifacts": [str(artifact.pk)],
            "uploads": SimpleUploadedFile("poster.png", b"mine"),
        },
    )
    run = Run.objects.get(creation__brief="The same poster, with a border")
    assert response.status_code == 302
    assert response["Location"] == reverse("run_detail", args=[run.pk])
    inputs = {f.name: (f.size, f.file.read()) for f in run.creation.inputs.all()}
    assert inputs == {"poster.png": (4, b"mine"), "poster (2).png": (len(POSTER), POSTER)}


def test_a_refused_attachment_keeps_the_form_and_says_why(team: Team, client: Client, settings: Any) -> None:
    settings.UPLOAD_MAX_FILE_BYTES = 10
    artifact = _poster(team)
    response = signed_in(client, team.member).post(
        reverse("creation_new", args=[team.workspace.slug]),
        {"brief": "Again", "visibility": "workspace", "model": "", "artifacts": [str(artifact.pk)]},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "poster.png: too large" in html
    assert f'<input type="hidden" name="artifacts" value="{artifact.pk}">' in html  # still attached
    assert not Run.objects.filter(creation__brief="Again").exists()


def test_a_viewer_on_the_teams_form_is_pointed_to_where_they_may_start(team: Team, client: Client) -> None:
    artifact = _poster(team)
    response = signed_in(client, team.viewer).get(_new_url(team.workspace, artifact.pk))
    assert response.status_code == 403
    assert f'href="{_new_url(_personal(team.viewer), artifact.pk)}"' in response.content.decode()
