"""Members and invitations: who may change whom, the last owner, and every way an invitation is used."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.support.fixtures.accounts import PASSWORD, Team, make_user
from workspaces.invitations import invitation_accept, invitation_create, invitation_revoke
from workspaces.models import Invitation, Membership, Role
from workspaces.services import (
    WorkspaceRuleError,
    membership_add,
    membership_change_role,
    membership_leave,
    membership_remove,
)

pytestmark = pytest.mark.django_db


def _membership(team: Team, user: Any) -> Membership:
    return Membership.objects.select_related("workspace").get(workspace=team.workspace, user=user)


def _token(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def test_the_last_owner_can_neither_leave_nor_be_demoted_but_can_hand_over(team: Team) -> None:
    with pytest.raises(WorkspaceRuleError, match="last owner"):
        membership_leave(workspace=team.workspace, user=team.owner)
    with pytest.raises(WorkspaceRuleError, match="needs an owner"):
        membership_change_role(membership=_membership(team, team.owner), actor=team.owner, role=Role.ADMIN)
    membership_change_role(membership=_membership(team, team.member), actor=team.owner, role=Role.OWNER)
    membership_leave(workspace=team.workspace, user=team.owner)  # handed over, so free to go
    assert _membership(team, team.member).role == Role.OWNER
    assert not Membership.objects.filter(workspace=team.workspace, user=team.owner).exists()


def test_admins_manage_members_but_not_owners(team: Team) -> None:
    admin = make_user("ada")
    membership_add(workspace=team.workspace, user=admin, role=Role.ADMIN)
    membership_change_role(membership=_membership(team, team.member), actor=admin, role=Role.VIEWER)
    assert _membership(team, team.member).role == Role.VIEWER
    with pytest.raises(WorkspaceRuleError, match="Only an owner"):
        membership_change_role(membership=_membership(team, team.owner), actor=admin, role=Role.MEMBER)
    with pytest.raises(WorkspaceRuleError, match="Only an owner"):
        membership_change_role(membership=_membership(team, team.member), actor=admin, role=Role.OWNER)
    with pytest.raises(WorkspaceRuleError, match="Admins cannot remove an owner"):
        membership_remove(membership=_membership(team, team.owner), actor=admin)
    membership_remove(membership=_membership(team, team.viewer), actor=admin)
    assert not Membership.objects.filter(workspace=team.workspace, user=team.viewer).exists()


def test_members_and_viewers_change_nobody(team: Team) -> None:
    for actor in (team.member, team.viewer):
        with pytest.raises(WorkspaceRuleError, match="owners and admins"):
            membership_change_role(membership=_membership(team, team.owner if actor == team.viewer else team.viewer),
                                   actor=actor, role=Role.VIEWER)  # fmt: skip
        with pytest.raises(WorkspaceRuleError, match="owners and admins"):
            invitation_create(workspace=team.workspace, actor=actor, role=Role.MEMBER)
    client = Client()
    client.force_login(team.member)
    response = client.post(reverse("membership_role", args=[team.workspace.slug, _membership(team, team.viewer).pk]),
                           {"role": Role.OWNER})  # fmt: skip
    assert response.status_code == 302
    assert _membership(team, team.viewer).role == Role.VIEWER


def test_a_role_change_takes_effect_at_once(team: Team) -> None:
    client = Client()
    client.force_login(team.member)
    assert client.get(reverse("creation_new", args=[team.workspace.slug])).status_code == 200
    membership_change_role(membership=_membership(team, team.member), actor=team.owner, role=Role.VIEWER)
    assert client.get(reverse("creation_new", args=[team.workspace.slug])).status_code == 403


def test_an_invitation_link_lets_a_signed_in_person_join_once(team: Team) -> None:
    link = invitation_create(workspace=team.workspace, actor=team.owner, role=Role.MEMBER).url
    client = Client()
    client.force_login(team.outsider)
    page = client.get(link.removeprefix("http://localhost:8000"))
    assert "Join Studio" in page.content.decode()
    response = client.post(link.removeprefix("http://localhost:8000"))
    assert response["Location"] == f"/w/{team.workspace.slug}/"
    assert _membership(team, team.outsider).role == Role.MEMBER
    other = make_user("otto")
    with pytest.raises(WorkspaceRuleError, match="already been used"):
        invitation_accept(token=_token(link), user=other)


def test_a_new_person_signs_up_from_the_link_and_lands_in_the_workspace(team: Team) -> None:
    link = invitation_create(workspace=team.workspace, actor=team.owner, role=Role.VIEWER).url
    path = link.removeprefix("http://localhost:8000")
    client = Client()
    assert "Sign up and join" in client.get(path).content.decode()
    response = client.post(
        reverse("signup"),
        {"username": "nina", "email": "nina@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response["Location"] == f"/w/{team.workspace.slug}/"
    assert Membership.objects.get(workspace=team.workspace, user__username="nina").role == Role.VIEWER


def test_an_existing_person_logs_in_from_the_link_and_joins(team: Team) -> None:
    link = invitation_create(workspace=team.workspace, actor=team.owner, role=Role.MEMBER).url
    path = link.removeprefix("http://localhost:8000")
    client = Client()
    page = client.get(path).content.decode()
    assert f"?next={path}" in page
    client.post(reverse("login") + f"?next={path}", {"username": "mallory", "password": PASSWORD})
    assert client.post(path).status_code == 302
    assert _membership(team, team.outsider).role == Role.MEMBER


@pytest.mark.parametrize("state", ["expired", "revoked", "used"])
def test_a_dead_invitation_says_why_and_admits_nobody(team: Team, state: str) -> None:
    created = invitation_create(workspace=team.workspace, actor=team.owner, role=Role.MEMBER)
    if state == "expired":
        Invitation.objects.filter(pk=created.invitation.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    elif state == "revoked":
        invitation_revoke(invitation=created.invitation, actor=team.owner)
    else:
        invitation_accept(token=_token(created.url), user=make_user("first"))
    client = Client()
    client.force_login(team.outsider)
    path = created.url.removeprefix("http://localhost:8000")
    response = client.post(path)
    assert response.status_code == 410
    assert {"expired": "has expired", "revoked": "was withdrawn", "used": "already been used"}[state] in (
        response.content.decode()
    )
    assert not Membership.objects.filter(workspace=team.workspace, user=team.outsider).exists()


def test_an_unknown_link_is_a_404_and_the_token_is_not_stored(team: Team) -> None:
    created = invitation_create(workspace=team.workspace, actor=team.owner, role=Role.MEMBER)
    assert _token(created.url) not in str(Invitation.objects.values_list().get())
    assert Client().get("/invitations/not-a-token/").status_code == 404


def test_inviting_by_email_mails_the_link_and_refuses_an_existing_member(
    team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    team.member.email = "bob@example.com"
    team.member.save()
    client = Client()
    client.force_login(team.owner)
    url = reverse("workspace_members", args=[team.workspace.slug])
    refused = client.post(url, {"role": Role.MEMBER, "email": "BOB@example.com"})
    assert refused.status_code == 400
    assert "already a member" in refused.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"role": Role.MEMBER, "email": "new@example.com"})
    assert response.status_code == 200
    assert "shown only now" in response.content.decode()
    (sent,) = mail.outbox
    assert sent.to == ["new@example.com"]
    link = next(word for word in sent.body.split() if "/invitations/" in word)
    assert link in response.content.decode()  # the same link, shown once to the inviter


def test_the_members_page_lists_people_and_roles_to_every_member(team: Team) -> None:
    client = Client()
    client.force_login(team.viewer)
    html = client.get(reverse("workspace_members", args=[team.workspace.slug])).content.decode()
    for name in ("alice", "bob", "vera"):
        assert f'data-member="{name}"' in html
    assert "Create invitation link" not in html  # a viewer cannot invite
    outsider = Client()
    outsider.force_login(team.outsider)
    assert outsider.get(reverse("workspace_members", args=[team.workspace.slug])).status_code == 404
    assert mail.outbox == []


def test_signing_up_from_a_link_welcomes_and_forgets_the_link(team: Team) -> None:

    link = invitation_create(workspace=team.workspace, actor=team.owner, role="member").url
    client = Client()
    client.get(link)

    response = client.post(
        reverse("signup"),
        {"username": "newbie", "email": "newbie@example.com", "password1": PASSWORD, "password2": PASSWORD},
        follow=True,
    )

    assert "Welcome to Studio." in response.content.decode()
    assert "pending_invitation" not in client.session


def test_a_new_invitation_link_is_labelled_with_its_role_and_recipient_and_can_be_copied(team: Team) -> None:
    client = Client()
    client.force_login(team.owner)
    url = reverse("workspace_members", args=[team.workspace.slug])
    html = client.post(url, {"role": Role.VIEWER, "email": "Vic@Example.com"}).content.decode()
    assert '<label for="invitation-link">Invitation link: viewer, for vic@example.com</label>' in html
    assert '<button type="button" class="button" data-copy="invitation-link" hidden>Copy</button>' in html
    assert "js/copy_link.js" in html
    anyone = client.post(url, {"role": Role.MEMBER, "email": ""}).content.decode()
    assert '<label for="invitation-link">Invitation link: member, for whoever you send it to</label>' in anyone


@pytest.mark.parametrize(
    "path",
    [
        "/invitations/not-a-token/",
        "/invitations/abc/def/",  # a slash a mail client added
        "/invitations/%E2%80%8Babc/",
        "/invitations/" + "A" * 42 + "/",  # cut short by one character
    ],
)
def test_a_malformed_invitation_link_gets_the_invitation_page_saying_so(team: Team, path: str) -> None:
    response = Client().get(path)
    assert response.status_code == 404
    html = response.content.decode()
    assert "<h1>This invitation cannot be used</h1>" in html
    assert "This is not a whole invitation link" in html


def test_an_unknown_well_formed_link_gets_the_invitation_page(team: Team) -> None:
    response = Client().get("/invitations/" + "A" * 43 + "/")
    assert response.status_code == 404
    assert "This invitation link is not valid. Ask for a new one." in response.content.decode()
    assert "<h1>This invitation cannot be used</h1>" in response.content.decode()
