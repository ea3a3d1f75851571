"""Who may call the API: personal access tokens and the browser's session."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from api.models import PersonalAccessToken, TokenScope
from tests.support.api import ApiClient, api_as, token_for
from tests.support.fixtures.accounts import Team

# Each test's requests fall in one of the rate limiter's windows, however slowly they run.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("rate_limit_clock")]


def problem(response: Any) -> dict[str, Any]:
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == response.status_code
    return body


def test_it_lists_the_callers_workspaces_with_role_and_quota(team: Team) -> None:
    response = api_as(team.viewer).get("/api/v1/workspaces")
    assert response.status_code == 200
    [workspace] = [w for w in response.json() if w["slug"] == team.workspace.slug]
    assert workspace["role"] == "viewer"
    assert workspace["quota"]["tokens_quota"] == team.workspace.quota_month_tokens
    assert workspace["quota"]["tokens_used"] == 0


def test_it_asks_for_a_token_when_there_is_none(team: Team) -> None:
    response = ApiClient(None).get("/api/v1/workspaces")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert "Authorization: Bearer" in problem(response)["detail"]


def test_it_refuses_a_made_up_token(team: Team) -> None:
    response = ApiClient("atl_00000000_" + "0" * 64).get("/api/v1/workspaces")
    assert response.status_code == 401
    assert "not valid" in problem(response)["detail"]


def test_it_refuses_a_revoked_token_saying_so(team: Team) -> None:
    raw = token_for(team.member)
    PersonalAccessToken.objects.filter(user=team.member).update(revoked_at=timezone.now())
    response = ApiClient(raw).get("/api/v1/workspaces")
    assert response.status_code == 401
    assert "revoked" in problem(response)["detail"]


def test_it_refuses_an_expired_token_saying_so(team: Team) -> None:
    raw = token_for(team.member, expires_in_days=1)
    PersonalAccessToken.objects.filter(user=team.member).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = ApiClient(raw).get("/api/v1/workspaces")
    assert response.status_code == 401
    assert "expired" in problem(response)["detail"]


def test_it_notes_when_a_token_was_last_used(team: Team) -> None:
    raw = token_for(team.member)
    assert PersonalAccessToken.objects.get(user=team.member).last_used_at is None
    ApiClient(raw).get("/api/v1/workspaces")
    assert PersonalAccessToken.objects.get(user=team.member).last_used_at is not None


def test_a_signed_in_browser_reads_without_a_token(team: Team) -> None:
    browser = Client()
    browser.force_login(team.member)
    assert browser.get("/api/v1/workspaces").status_code == 200


def test_a_workspace_of_others_is_not_found(team: Team) -> None:
    response = api_as(team.outsider).get(f"/api/v1/workspaces/{team.workspace.slug}")
    assert response.status_code == 404
    assert problem(response)["title"] == "Not found"


def test_past_the_rate_limit_it_answers_429_with_retry_after(team: Team, settings: Any) -> None:
    settings.API_RATE_LIMIT_PER_MINUTE = 3
    client = api_as(team.member)
    statuses = [client.get("/api/v1/workspaces").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    limited = client.get("/api/v1/workspaces")
    assert 1 <= int(limited["Retry-After"]) <= 60
    assert "Wait" in problem(limited)["detail"]


def test_a_persons_tokens_share_one_rate(team: Team, settings: Any) -> None:
    """Ten tokens do not make ten times the rate: requests count per person."""
    settings.API_RATE_LIMIT_PER_MINUTE = 3
    tokens = [api_as(team.member) for _ in range(4)]
    browser = Client()
    browser.force_login(team.member)

    statuses = [client.get("/api/v1/workspaces").status_code for client in tokens]

    assert statuses == [200, 200, 200, 429]
    assert "all your tokens count together" in problem(tokens[0].get("/api/v1/workspaces"))["detail"]
    assert browser.get("/api/v1/workspaces").status_code == 429  # the signed-in browser is the same person
    assert api_as(team.owner).get("/api/v1/workspaces").status_code == 200  # another person counts on their own


def made_up_token() -> str:
    return f"atl_{secrets.token_hex(4)}_{secrets.token_hex(32)}"


def test_tokens_that_were_never_made_are_limited_per_address(team: Team, settings: Any) -> None:
    settings.API_INVALID_TOKENS_PER_ADDRESS_PER_MINUTE = 3
    guesses = [ApiClient(made_up_token()).get("/api/v1/workspaces") for _ in range(3)]
    assert [g.status_code for g in guesses] == [401, 401, 401]

    # Past the limit no token from that address is checked, a right one neither: a lucky guess gets nothing.
    real = ApiClient(token_for(team.member))
    refused = real.get("/api/v1/workspaces")

    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert "Too many tokens that do not exist were sent from your network" in problem(refused)["detail"]
    assert ApiClient(made_up_token()).get("/api/v1/workspaces").status_code == 429
    # Another address is counted on its own.
    elsewhere = real.get("/api/v1/workspaces", REMOTE_ADDR="198.51.100.7")
    assert elsewhere.status_code == 200


def test_revoked_and_expired_tokens_are_no_guesses(team: Team, settings: Any) -> None:
    """A script still sending a token its person revoked is told so, however often, and locks nobody out."""
    settings.API_INVALID_TOKENS_PER_ADDRESS_PER_MINUTE = 2
    old = ApiClient(token_for(team.member))
    PersonalAccessToken.objects.filter(user=team.member).update(revoked_at=timezone.now())

    statuses = [old.get("/api/v1/workspaces").status_code for _ in range(4)]

    assert statuses == [401, 401, 401, 401]
    assert api_as(team.member).get("/api/v1/workspaces").status_code == 200


def test_the_schema_says_every_operation_answers_problems(team: Team) -> None:
    schema = Client().get("/api/v1/openapi.json").json()
    for path in schema["paths"].values():
        for operation in path.values():
            for status in ("401", "404", "422", "429"):
                content = operation["responses"][status]["content"]
                assert content == {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    assert schema["components"]["securitySchemes"]["PersonalTokenAuth"]["scheme"] == "bearer"


def test_a_read_token_scope_is_recorded(team: Team) -> None:
    token_for(team.member, scope=TokenScope.READ)
    assert not PersonalAccessToken.objects.get(user=team.member).can_write


def test_a_browser_session_writes_only_with_its_csrf_token(team: Team) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(team.member)
    url = f"/api/v1/workspaces/{team.workspace.slug}/runs"
    refused = browser.post(url, {"brief": "a poster"}, content_type="application/json")
    assert refused.status_code == 403
    assert "CSRF" in problem(refused)["detail"]
    browser.get("/accounts/login/")  # a page with a form sets the CSRF cookie, as in a browser
    token = browser.cookies["csrftoken"].value
    made = browser.post(url, {"brief": "a poster"}, content_type="application/json", headers={"X-CSRFToken": token})
    assert made.status_code == 201


def test_a_token_request_needs_no_csrf_token_and_makes_no_session(team: Team) -> None:
    client = api_as(team.member)
    response = client.post(f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "a poster"})
    assert response.status_code == 201
    assert "sessionid" not in response.cookies
