"""Sign up, log in, log out, password reset; who may open a workspace."""

import re

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client

from tests.support.fixtures.accounts import Team
from workspaces.models import Role, Workspace

pytestmark = pytest.mark.django_db


def _signup(username: str, email: str) -> dict[str, str]:
    return {"username": username, "email": email, "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"}


def test_sign_up_creates_a_personal_workspace_and_lands_on_its_dashboard(client: Client) -> None:
    response = client.post(
        "/accounts/signup/",
        _signup("nina", "nina@example.com"),
        follow=True,
    )
    assert response.status_code == 200
    user = User.objects.get(username="nina")
    workspace = Workspace.objects.get(memberships__user=user)
    assert workspace.is_personal
    assert workspace.memberships.get(user=user).role == Role.OWNER
    assert response.redirect_chain[-1][0] == f"/w/{workspace.slug}/"
    assert "Nothing made here yet" in response.content.decode()


def test_sign_up_with_mismatched_passwords_shows_the_error_and_keeps_the_input(client: Client) -> None:
    response = client.post(
        "/accounts/signup/",
        {**_signup("nina", "nina@example.com"), "password2": "other"},
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "match" in body
    assert 'value="nina"' in body
    assert not User.objects.filter(username="nina").exists()


def test_sign_up_with_an_email_in_use_never_says_so_and_tells_its_owner_by_mail(client: Client, team: Team) -> None:
    response = client.post("/accounts/signup/", _signup("nina", "ALICE@example.com"))

    assert response.status_code == 200
    page = response.content.decode()
    assert "Check your inbox" in page
    assert "alice@example.com" in page
    assert "already" not in page
    assert "exists" not in page
    assert not User.objects.filter(username="nina").exists()
    assert "_auth_user_id" not in client.session  # nobody is signed in to anything
    [notice] = mail.outbox
    assert notice.to == ["alice@example.com"]
    assert "your username is alice" in str(notice.body)
    assert re.search(r"http://\S+/accounts/password_reset/", str(notice.body))


def test_login_and_logout(client: Client, team: Team) -> None:
    response = client.post("/accounts/login/", {"username": "alice", "password": "correct horse battery"}, follow=True)
    assert response.wsgi_request.user.is_authenticated
    assert response.redirect_chain[-1][0].startswith("/w/")
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302


def test_password_reset_sends_a_link_that_sets_a_new_password(client: Client, team: Team) -> None:
    client.post("/accounts/password_reset/", {"email": "alice@example.com"})
    assert len(mail.outbox) == 1
    link = re.search(r"http://[^/]+(/accounts/reset/\S+/)", str(mail.outbox[0].body))
    assert link is not None
    form_page = client.get(link.group(1), follow=True)
    new = {"new_password1": "brand-new-phrase", "new_password2": "brand-new-phrase"}
    client.post(form_page.redirect_chain[-1][0], new)
    assert client.login(username="alice", password="brand-new-phrase")


@pytest.mark.parametrize("url", ["/", "/w/studio/"])
def test_pages_that_need_login_redirect_to_the_login_page(client: Client, team: Team, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("who", ["owner", "member", "viewer"])
def test_members_see_the_workspace_dashboard(client: Client, team: Team, who: str) -> None:
    client.force_login(getattr(team, who))
    response = client.get(f"/w/{team.workspace.slug}/")
    assert response.status_code == 200
    assert team.workspace.name in response.content.decode()


def test_an_outsider_gets_not_found_for_someone_elses_workspace(client: Client, team: Team) -> None:
    client.force_login(team.outsider)
    response = client.get(f"/w/{team.workspace.slug}/")
    assert response.status_code == 404
    assert team.workspace.name not in response.content.decode()
