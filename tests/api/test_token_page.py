"""The Access tokens page: a person makes a token, sees it once, uses it, revokes it."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from api.models import PersonalAccessToken
from tests.support.api import ApiClient
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def test_a_token_is_shown_once_works_and_stops_when_revoked(team: Team, client: Client) -> None:
    client.force_login(team.member)
    made = client.post("/settings/tokens/", {"name": "nightly reports", "scope": "write", "expires_in_days": "30"})
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
    client.post("/settings/tokens/", {"name": "owner laptop", "scope": "read"})
    token = PersonalAccessToken.objects.get(user=team.owner)
    client.force_login(team.member)
    assert client.post(f"/settings/tokens/{token.pk}/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None
