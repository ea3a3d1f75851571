"""A creation with a first version made by the team's own model (schedules refuse the demo model),
and no broker: the tests end each refresh's run themselves."""

from __future__ import annotations

from typing import Any

import pytest

from creations.models import Creation
from creations.runs.services import creation_submit
from tests.creations.schedules.steps import ended
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda *args, **kwargs: None)


@pytest.fixture
def endpoint(team: Team) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        workspace=team.workspace, name="team model", base_url="http://127.0.0.1:9/v1", model="m"
    )


@pytest.fixture
def creation(team: Team, endpoint: ModelEndpoint, django_capture_on_commit_callbacks: Any) -> Creation:
    with django_capture_on_commit_callbacks(execute=True):
        v1 = creation_submit(
            workspace=team.workspace, author=team.member, brief="a weekly report", model_endpoint=endpoint
        )
        ended(v1, {"report.md": b"# Week 1\n"})
    return v1.creation
