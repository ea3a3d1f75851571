"""Evaluations without a broker: runs are ended by the tests as their worker would end them, and
plain tasks are answered by calling the Celery task's service with the message it was sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint


class PlainMessages(list[int]):
    """The plain tasks sent to the broker, by item id."""


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda *args, **kwargs: None)


@pytest.fixture
def plain_messages(monkeypatch: pytest.MonkeyPatch) -> PlainMessages:
    sent = PlainMessages()

    def send_task(name: str, args: list[Any]) -> None:
        assert name == "creations.evaluations.tasks.answer_plain_task"
        sent.append(args[0])

    monkeypatch.setattr("creations.evaluations.services.current_app.send_task", send_task)
    return sent


@pytest.fixture
def endpoint(team: Team) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        workspace=team.workspace, name="team model", base_url="http://127.0.0.1:9/v1", model="m"
    )


def suite_lines(count: int, *, rule: str = "number") -> bytes:
    return "\n".join(
        json.dumps({"id": f"t{n}", "prompt": f"What is {n} squared?", "rule": rule, "expected": str(n * n)})
        for n in range(1, count + 1)
    ).encode()
