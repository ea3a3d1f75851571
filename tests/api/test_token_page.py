"""The Access tokens page: a person makes a token, sees it once, uses it, revokes it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from api.models import PersonalAccessToken
from tests.support.api import ApiClient
from tests.support.fixtures.accounts import PASSWORD, Team

pytestmark = pytest.mark.django_db


def test_a_token_is_shown_once_works_and_stops_when_revoked(team: Team, client: Client) -> None:
    client.force_login(team.member)
    made = client.post(
        "/settings/tokens/",
        {"name": "nightly reports", "scope": "write", "expires_in_days": "30", "password": PASSWORD},
    )
    assert made.status_code == 200
    raw = re.search(rb'data-role="token-value">(atl_[0-9a-f_]+)<', made.content)
    assert raw is not None
    token = raw.group(1).decode()
    assert token.encode() not in client.get("/settings/tokens/").content  # shown once, never again
    assert made["Cache-Control"].startswith("max-age=0")

    api = ApiClient(token)
    assert api.get("/api/v1/workspaces").status_code == 200
    stored = PersonalAccessToken.objects.get(user=team.member)
    assert (stored.name, stored.scope, stored.expires_at is not None) == ("nightly reports", "write", True)
    assert token not in stored.secret_hash

    revoked = client.post(f"/settings/tokens/{stored.pk}/revoke/", follow=True)
    assert "Token “nightly reports” revoked" in revoked.content.decode()
    assert api.get("/api/v1/workspaces").status_code == 401


def test_a_token_without_a_name_is_explained_and_not_made(team: Team, client: Client) -> None:
    client.force_login(team.member)
    response = client.post("/settings/tokens/", {"name": "", "scope": "read"})
    assert response.status_code == 422
    assert "This field is required." in response.content.decode()
    assert not PersonalAccessToken.objects.exists()


def test_nobody_revokes_anothers_token(team: Team, client: Client) -> None:
    client.force_login(team.owner)
    client.post("/settings/tokens/", {"name": "owner laptop", "scope": "read", "password": PASSWORD})
    token = PersonalAccessToken.objects.get(user=team.owner)
    client.force_login(team.member)
    assert client.post(f"/settings/tokens/{token.pk}/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def make(client: Client, name: str, password: str = PASSWORD) -> Any:
    return client.post("/settings/tokens/", {"name": name, "scope": "read", "password": password})


def test_making_a_token_asks_for_the_password_again(team: Team, client: Client) -> None:
    client.force_login(team.member)  # a browser left signed in is not enough

    without = client.post("/settings/tokens/", {"name": "laptop", "scope": "read"})
    wrong = make(client, "laptop", password="a guess")

    for refused in (without, wrong):
        assert refused.status_code == 422
        assert b'data-role="token-value"' not in refused.content
        assert 'value="laptop"' in refused.content.decode()  # what was typed is kept, the password not
    assert "That is not your password." in wrong.content.decode()
    assert 'type="password"' in client.get("/settings/tokens/").content.decode()
    assert not PersonalAccessToken.objects.exists()
    assert make(client, "laptop").status_code == 200
    assert PersonalAccessToken.objects.filter(user=team.member, name="laptop").exists()


def test_password_guesses_on_the_token_page_count_as_login_attempts(
    team: Team, client: Client, settings: Any, own_redis: str
) -> None:
    settings.CACHES = {**settings.CACHES, "ratelimit": {**settings.CACHES["ratelimit"], "LOCATION": own_redis}}
    settings.RATE_LIMIT_LOGINS_PER_ACCOUNT_PER_HOUR = 2
    client.force_login(team.member)

    statuses = [make(client, "laptop", password=f"guess {n}").status_code for n in range(2)]
    refused = make(client, "laptop")  # the right password, past the limit: not even checked

    assert statuses == [422, 422]
    assert refused.status_code == 429
    assert "Too many attempts to log in to this account" in refused.content.decode()
    assert 'value="laptop"' in refused.content.decode()
    assert not PersonalAccessToken.objects.exists()
    assert Client().post("/accounts/login/", {"username": "bob", "password": PASSWORD}).status_code == 429


def test_one_person_holds_at_most_the_tokens_the_setting_allows(team: Team, client: Client, settings: Any) -> None:
    settings.API_TOKENS_MAX_PER_PERSON = 2
    client.force_login(team.member)
    assert [make(client, name).status_code for name in ("laptop", "nightly")] == [200, 200]

    refused = make(client, "third")

    assert refused.status_code == 422
    assert "You have 2 access tokens, the most one person may have (2)." in refused.content.decode()
    assert "Revoke one you no longer use" in refused.content.decode()
    assert PersonalAccessToken.objects.filter(user=team.member).count() == 2
    # A revoked token no longer counts; nor do another person's.
    client.post(f"/settings/tokens/{PersonalAccessToken.objects.get(name='laptop').pk}/revoke/")
    assert make(client, "third").status_code == 200
    client.force_login(team.owner)
    assert make(client, "owner laptop").status_code == 200
