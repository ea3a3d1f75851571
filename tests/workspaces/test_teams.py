"""Team workspaces: creating, renaming and deleting one, with the rules enforced by the services."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import reverse

from creations.models import Artifact, Creation, InputFile, Run
from tests.support.artifacts import Output, finished_run
from tests.support.factories import ModelEndpointFactory
from tests.support.fixtures.accounts import PASSWORD, Team, make_user
from tests.support.media_samples import png_bytes
from workspaces.models import Membership, ModelEndpoint, Role, Workspace
from workspaces.services import WorkspaceRuleError, membership_add, workspace_delete, workspace_rename

pytestmark = pytest.mark.django_db(transaction=True)  # stored files are deleted once the delete commits


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_anyone_signed_in_creates_a_team_workspace_and_owns_it(team: Team) -> None:
    response = signed_in(team.member).post(reverse("workspace_new"), {"name": "Poster Club", "slug": "posters"})
    assert response.status_code == 302
    assert response["Location"] == "/w/posters/"
    membership = Membership.objects.get(workspace__slug="posters", user=team.member)
    assert membership.role == Role.OWNER
    assert not membership.workspace.is_personal


@pytest.mark.parametrize(
    ("slug", "message"),
    [("studio", "is taken"), ("new", "is reserved"), ("Bad Slug!", "lowercase letters"), ("-x", "lowercase letters")],
)
def test_a_bad_address_is_refused_on_its_field_and_the_name_is_kept(team: Team, slug: str, message: str) -> None:
    Workspace.objects.filter(pk=team.workspace.pk).update(slug="studio")
    response = signed_in(team.member).post(reverse("workspace_new"), {"name": "Poster Club", "slug": slug})
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert 'value="Poster Club"' in html
    assert Workspace.objects.filter(name="Poster Club").count() == 0


def test_admins_rename_members_cannot(team: Team) -> None:
    admin = make_user("ada")
    membership_add(workspace=team.workspace, user=admin, role=Role.ADMIN)
    workspace_rename(workspace=team.workspace, actor=admin, name="Studio Two")
    with pytest.raises(WorkspaceRuleError, match="owners and admins"):
        workspace_rename(workspace=team.workspace, actor=team.member, name="Mine now")
    response = signed_in(team.member).post(reverse("workspace_settings", args=[team.workspace.slug]), {"name": "X"})
    assert response.status_code == 400
    team.workspace.refresh_from_db()
    assert team.workspace.name == "Studio Two"


def test_deleting_needs_an_owner_and_the_typed_address(team: Team) -> None:
    admin = make_user("ada")
    membership_add(workspace=team.workspace, user=admin, role=Role.ADMIN)
    with pytest.raises(WorkspaceRuleError, match="Only an owner"):
        workspace_delete(workspace=team.workspace, actor=admin, confirmation=team.workspace.slug)
    response = signed_in(team.owner).post(reverse("workspace_delete", args=[team.workspace.slug]), {"confirm": "nope"})
    assert response.status_code == 400
    assert "to confirm" in response.content.decode()
    assert Workspace.objects.filter(pk=team.workspace.pk).exists()


def test_deleting_a_workspace_removes_its_creations_runs_endpoints_and_stored_files(team: Team) -> None:
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=[Output("poster.png", png_bytes())])
    artifact = run.artifacts.get()
    default_storage.save(f"run-events/{run.pk}/overflow.txt", ContentFile(b"long output"))
    InputFile.objects.create(
        creation=run.creation, name="data.csv", file=ContentFile(b"a,b\n", name="data.csv"), size=4
    )
    ModelEndpoint.objects.create(workspace=team.workspace, name="mine", base_url="http://127.0.0.1:9/v1", model="m")
    files = [
        artifact.file.path,
        InputFile.objects.get().file.path,
        default_storage.path(f"run-events/{run.pk}/overflow.txt"),
    ]
    assert all(Path(f).exists() for f in files)
    other = finished_run(
        workspace=team.owner.workspaces.get(is_personal=True),
        author=team.owner,
        outputs=[Output("keep.png", png_bytes())],
    )

    response = signed_in(team.owner).post(
        reverse("workspace_delete", args=[team.workspace.slug]), {"confirm": team.workspace.slug}
    )

    assert response.status_code == 302
    assert not Workspace.objects.filter(pk=team.workspace.pk).exists()
    assert not Creation.objects.filter(pk=run.creation_id).exists()
    assert not Run.objects.filter(pk=run.pk).exists()
    assert not ModelEndpoint.objects.filter(name="mine").exists()
    assert [f for f in files if Path(f).exists()] == []
    assert Path(other.artifacts.get().file.path).exists()  # another workspace's files stay
    assert Artifact.objects.filter(run=other).count() == 1


def test_a_personal_workspace_cannot_be_deleted_or_left(team: Team) -> None:
    personal = team.owner.workspaces.get(is_personal=True)
    with pytest.raises(WorkspaceRuleError, match="personal"):
        workspace_delete(workspace=personal, actor=team.owner, confirmation=personal.slug)


def test_the_switcher_offers_a_new_team_workspace(team: Team) -> None:
    client = Client()
    assert client.login(username=team.member.username, password=PASSWORD)
    html = client.get(reverse("workspace_dashboard", args=[team.workspace.slug])).content.decode()
    assert reverse("workspace_new") in html
    assert reverse("workspace_members", args=[team.workspace.slug]) in html


def test_a_new_team_dashboard_counts_its_members_and_suggests_inviting(team: Team) -> None:
    client = signed_in(team.member)
    client.post(reverse("workspace_new"), {"name": "Poster Club", "slug": "posters"})
    html = client.get(reverse("workspace_dashboard", args=["posters"])).content.decode()
    assert "1 member<" in html
    assert "Invite your colleagues" in html
    studio = signed_in(team.owner).get(reverse("workspace_dashboard", args=[team.workspace.slug])).content.decode()
    assert "3 members" in studio
    assert "Invite your colleagues" not in studio


def test_a_team_without_a_model_is_told_to_add_one_by_its_managers_only(team: Team) -> None:
    dashboard = reverse("workspace_dashboard", args=[team.workspace.slug])
    owner_view = signed_in(team.owner).get(dashboard).content.decode()
    assert 'data-role="next-model"' in owner_view
    assert reverse("workspace_endpoints", args=[team.workspace.slug]) in owner_view
    assert 'data-role="next-model"' not in signed_in(team.member).get(dashboard).content.decode()

    ModelEndpointFactory.create(workspace=team.workspace)

    assert 'data-role="next-model"' not in signed_in(team.owner).get(dashboard).content.decode()
