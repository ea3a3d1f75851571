"""Deleting a creation: who may, never while it runs, and its files leave storage (the ledger stays)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import reverse

from creations.models import Artifact, Creation, InputFile, Run, RunStatus, UsageRecord, Visibility
from creations.runs.services import creation_delete
from creations.usage.ledger import usage_record_write
from creations.usage.selectors import workspace_storage_bytes
from tests.support.artifacts import Output, finished_run
from tests.support.factories import InputFileFactory, make_run
from tests.support.fixtures.accounts import Team, make_user
from tests.support.media_samples import png_bytes
from workspaces.models import Role
from workspaces.services import membership_add

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(team: Team) -> User:
    user = make_user("ada")
    membership_add(workspace=team.workspace, user=user, role=Role.ADMIN)
    return user


@pytest.fixture
def colleague(team: Team) -> User:
    user = make_user("carol")
    membership_add(workspace=team.workspace, user=user, role=Role.MEMBER)
    return user


def bobs_run(team: Team) -> Run:
    """A finished run of a creation by bob (a member), with two stored files and an input."""
    run = finished_run(
        workspace=team.workspace,
        author=team.member,
        outputs=[Output("poster.png", png_bytes()), Output("notes.md", b"# Notes\n")],
    )
    InputFileFactory.create(creation=run.creation)
    return run


def stored_names(run: Run) -> list[str]:
    names = [str(a.file.name) for a in Artifact.objects.filter(run=run)]
    names += [str(f.file.name) for f in InputFile.objects.filter(creation=run.creation)]
    assert names
    assert all(default_storage.exists(name) for name in names)
    return names


def test_deleting_a_creation_frees_its_storage_and_keeps_the_ledger(
    team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    run = bobs_run(team)
    other = finished_run(workspace=team.workspace, author=team.owner, outputs=[Output("keep.md", b"# Keep\n")])
    usage_record_write(run_id=run.pk)
    names = stored_names(run)
    before = workspace_storage_bytes(workspace=team.workspace)
    kept = other.artifacts.get().size
    assert before > kept

    with django_capture_on_commit_callbacks(execute=True):
        creation_delete(creation=run.creation, user=team.member)

    assert not Creation.objects.filter(pk=run.creation_id).exists()
    assert not Run.objects.filter(pk=run.pk).exists()
    assert workspace_storage_bytes(workspace=team.workspace) == kept
    assert not any(default_storage.exists(name) for name in names)
    assert default_storage.exists(str(other.artifacts.get().file.name))
    record = UsageRecord.objects.get()  # what it spent stays spent
    assert (record.run_id, record.creation_id, record.workspace_id) == (None, None, team.workspace.pk)


@pytest.mark.parametrize("who", ["author", "admin", "owner"])
def test_the_author_and_the_workspaces_managers_may_delete(team: Team, admin: User, who: str) -> None:
    run = bobs_run(team)
    user = {"author": team.member, "admin": admin, "owner": team.owner}[who]
    creation_delete(creation=run.creation, user=user)
    assert not Creation.objects.exists()


@pytest.mark.parametrize("who", ["colleague", "viewer", "outsider"])
def test_others_may_not_delete(team: Team, colleague: User, who: str) -> None:
    run = bobs_run(team)
    user = {"colleague": colleague, "viewer": team.viewer, "outsider": team.outsider}[who]
    with pytest.raises(PermissionDenied):
        creation_delete(creation=run.creation, user=user)
    assert Creation.objects.filter(pk=run.creation_id).exists()


def test_a_viewer_may_not_delete_even_what_they_made_as_a_member(team: Team) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    Creation.objects.filter(pk=run.creation_id).update(author=team.viewer)
    run.creation.refresh_from_db()
    with pytest.raises(PermissionDenied):
        creation_delete(creation=run.creation, user=team.viewer)


@pytest.mark.parametrize("status", [RunStatus.QUEUED, RunStatus.STARTING, RunStatus.RUNNING])
def test_a_creation_with_a_run_going_is_not_deleted(team: Team, status: str) -> None:
    run = bobs_run(team)
    Run.objects.create(creation=run.creation, status=status)
    with pytest.raises(ValidationError, match="cancel it, then delete"):
        creation_delete(creation=run.creation, user=team.owner)
    assert Creation.objects.filter(pk=run.creation_id).exists()
    assert Artifact.objects.filter(run=run).count() == 2


# --- the page -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "status", "deleted"),
    [
        ("author", 302, True),
        ("admin", 302, True),
        ("owner", 302, True),
        ("colleague", 403, False),
        ("viewer", 403, False),
        ("outsider", 404, False),
        ("anonymous", 302, False),
    ],
)
def test_the_delete_button_answers_by_role(
    team: Team,
    admin: User,
    colleague: User,
    who: str,
    status: int,
    deleted: bool,
    django_capture_on_commit_callbacks: Any,
) -> None:
    run = bobs_run(team)
    names = stored_names(run)
    client = Client()
    users = {"author": team.member, "admin": admin, "owner": team.owner, "colleague": colleague}
    users |= {"viewer": team.viewer, "outsider": team.outsider}
    if who != "anonymous":
        client.force_login(users[who])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("creation_delete", args=[run.creation_id]), {"confirm": "delete"})
    assert response.status_code == status
    assert Creation.objects.filter(pk=run.creation_id).exists() is not deleted
    assert any(default_storage.exists(name) for name in names) is not deleted
    if deleted:
        assert response["Location"] == reverse("workspace_dashboard", args=[team.workspace.slug])
    if status == 403:
        assert "owners and admins can delete any" in response.content.decode()


def test_owners_and_admins_delete_a_colleagues_private_creation_without_seeing_it(
    team: Team, admin: User, client: Client
) -> None:
    run = bobs_run(team)
    Creation.objects.filter(pk=run.creation_id).update(visibility=Visibility.PRIVATE)
    client.force_login(admin)
    url = reverse("creation_delete", args=[run.creation_id])
    dashboard = reverse("workspace_dashboard", args=[team.workspace.slug])

    refused = client.post(url, {"confirm": "oops"}, follow=True)
    assert refused.redirect_chain == [(dashboard, 302)]  # never the private page itself
    assert "Nothing was deleted: Type “delete” to delete this creation" in refused.content.decode()
    assert Creation.objects.filter(pk=run.creation_id).exists()

    response = client.post(url, {"confirm": "delete"})
    assert response["Location"] == dashboard
    assert not Creation.objects.filter(pk=run.creation_id).exists()
    # A member who cannot see it is told it does not exist.
    other = bobs_run(team)
    Creation.objects.filter(pk=other.creation_id).update(visibility=Visibility.PRIVATE, author=team.owner)
    client.force_login(team.member)
    assert client.post(reverse("creation_delete", args=[other.creation_id]), {"confirm": "delete"}).status_code == 404


def test_the_page_offers_delete_only_to_those_who_may(team: Team, admin: User, colleague: User) -> None:
    run = bobs_run(team)
    url = reverse("creation_detail", args=[run.creation_id])
    action = reverse("creation_delete", args=[run.creation_id])
    for user, offered in [
        (team.member, True),
        (admin, True),
        (team.owner, True),
        (colleague, False),
        (team.viewer, False),
    ]:
        client = Client()
        client.force_login(user)
        assert (action in client.get(url).content.decode()) is offered, user


def test_delete_needs_the_typed_word(team: Team) -> None:
    run = bobs_run(team)
    client = Client()
    client.force_login(team.member)
    response = client.post(reverse("creation_delete", args=[run.creation_id]), {"confirm": "yes"})
    assert response.status_code == 400
    assert "Type “delete” to delete this creation; nothing was deleted." in response.content.decode()
    assert Creation.objects.filter(pk=run.creation_id).exists()
    assert client.get(reverse("creation_delete", args=[run.creation_id])).status_code == 405


def test_delete_while_a_run_goes_says_to_cancel_first(team: Team) -> None:
    run = bobs_run(team)
    Run.objects.create(creation=run.creation, status=RunStatus.RUNNING)
    client = Client()
    client.force_login(team.member)
    response = client.post(reverse("creation_delete", args=[run.creation_id]), {"confirm": "Delete"})
    assert response.status_code == 409
    html = response.content.decode()
    assert "cancel it, then delete the creation" in html
    assert "A run of it is still going: cancel it first." in html
    assert Creation.objects.filter(pk=run.creation_id).exists()
