"""A personal access token is a password: it never shows up in the platform's logs,
whether the request works, fails or finds nothing, nor in what the API answers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from django.utils import timezone

from api.models import PersonalAccessToken
from devstack.stack import AtelierServer
from tests.support.api import api_as, token_for
from tests.support.fixtures.accounts import Team


def _secret_half(raw: str) -> str:
    return raw.rsplit("_", 1)[-1]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_running_platform_never_logs_a_token(run_stack: AtelierServer, team: Team) -> None:
    good, revoked = token_for(team.member), token_for(team.member)
    PersonalAccessToken.objects.filter(user=team.member).exclude(lookup=good.split("_")[1]).update(
        revoked_at=timezone.now()
    )
    with httpx.Client(base_url=f"http://localhost:{run_stack.port}", timeout=10) as http:
        answers = [
            http.get("/api/v1/workspaces", headers={"Authorization": f"Bearer {good}"}),
            http.get("/api/v1/workspaces/nowhere", headers={"Authorization": f"Bearer {good}"}),
            http.get("/api/v1/workspaces", headers={"Authorization": f"Bearer {revoked}"}),
            http.get("/api/v1/workspaces", headers={"Authorization": f"Bearer {good}x"}),
            http.post("/api/v1/workspaces", headers={"Authorization": f"Bearer {good}"}),
        ]
    assert [a.status_code for a in answers] == [200, 404, 401, 401, 405]
    logs = "\n".join(proc.log_path.read_text(errors="replace") for proc in run_stack.processes.values())
    assert "GET /api/v1/workspaces" in logs  # daphne's access log: the requests were logged, the token not
    for raw in (good, revoked):
        assert _secret_half(raw) not in logs
        assert all(_secret_half(raw) not in answer.text for answer in answers)


@pytest.mark.django_db
def test_an_unexpected_error_is_logged_without_the_token(
    team: Team, caplog: pytest.LogCaptureFixture, monkeypatch: Any
) -> None:
    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("the usage figures could not be read")

    monkeypatch.setattr("api.operations.workspaces.workspaces_month_usage", broken)
    client = api_as(team.member)
    response = client.get("/api/v1/workspaces")
    assert response.status_code == 500
    assert response.json()["detail"] == "Something went wrong on our side; it was logged."
    assert "the usage figures could not be read" in caplog.text  # logged, for whoever runs the platform
    assert _secret_half(client.headers["Authorization"]) not in caplog.text
    assert "Traceback" not in response.content.decode()
