"""A workspace's usage and its language models through the API, with the web pages' rules."""

from __future__ import annotations

import pytest

from tests.support.api import api_as
from tests.support.factories import ModelEndpointFactory, UsageRecordFactory
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def test_usage_gives_the_months_totals_and_who_spent_them(team: Team) -> None:
    UsageRecordFactory.create(workspace=team.workspace, person=team.member, prompt_tokens=1200, completion_tokens=300)
    usage = api_as(team.member).get(f"/api/v1/workspaces/{team.workspace.slug}/usage").json()
    assert usage["totals"]["tokens"] == 1500
    assert usage["quotas"]["month_tokens"] == team.workspace.quota_month_tokens
    assert usage["by"] == "person"
    assert [s["name"] for s in usage["daily"]] == [team.member.username]
    assert sum(usage["daily"][0]["tokens"]) == 1500


def test_viewers_get_the_totals_only(team: Team) -> None:
    UsageRecordFactory.create(workspace=team.workspace, person=team.member, prompt_tokens=10)
    usage = api_as(team.viewer).get(f"/api/v1/workspaces/{team.workspace.slug}/usage?by=model").json()
    assert usage["by"] is None
    assert usage["costliest"] == []
    assert team.member.username not in str(usage)


@pytest.mark.parametrize("month", ["2026-13", "someday", "2999-01"])
def test_a_month_that_is_not_one_is_a_422(team: Team, month: str) -> None:
    response = api_as(team.member).get(f"/api/v1/workspaces/{team.workspace.slug}/usage?month={month}")
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "month"


def test_models_list_the_demo_and_switched_on_endpoints_never_a_key(team: Team) -> None:
    on = ModelEndpointFactory.create(
        workspace=team.workspace, name="Studio", base_url="https://user:pw@llm.example/v1", api_key="sk-secret-1234"
    )
    ModelEndpointFactory.create(workspace=team.workspace, name="Off", is_enabled=False)
    response = api_as(team.viewer).get(f"/api/v1/workspaces/{team.workspace.slug}/models")
    models = response.json()
    assert [(m["id"], m["model"]) for m in models] == [(None, "demo"), (on.pk, on.model)]
    assert models[1]["base_url"] == "https://llm.example/v1"
    assert "sk-secret" not in response.content.decode()
    assert "1234" not in response.content.decode()
