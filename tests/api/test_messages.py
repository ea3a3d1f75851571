"""Talking to a running agent through the API: the message waits for its next model
request; a run that has ended is told about instead (409)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from creations.models import Run, RunMessage, RunStatus
from tests.support.api import api_as
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db

SAID = "Please sign it with our team name."


def say(team: Team, run: Run, text: str = SAID, who: str = "member") -> Any:
    return api_as(getattr(team, who)).post(f"/api/v1/runs/{run.pk}/messages", {"text": text})


def test_a_member_tells_a_running_agent_something(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    response = say(team, run)
    assert response.status_code == 201, response.content
    message = response.json()
    assert (message["run_id"], message["text"], message["author"], message["delivered"]) == (
        run.pk,
        SAID,
        "bob",
        False,
    )
    stored = RunMessage.objects.get(pk=message["id"])
    assert (stored.run_id, stored.author, stored.text, stored.delivered_at) == (run.pk, team.member, SAID, None)


def test_a_run_that_has_ended_is_a_conflict_saying_to_refine_it(team: Team) -> None:
    ended = make_run(team, status=RunStatus.SUCCEEDED, finished_at=timezone.now())
    response = say(team, ended)
    assert response.status_code == 409, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["detail"] == "v1 has ended, so nobody would read this. Refine it to ask for a change."
    assert not RunMessage.objects.exists()


def test_too_many_messages_waiting_is_a_conflict(team: Team, settings: Any) -> None:
    settings.RUN_MESSAGES_MAX_PENDING = 2
    run = make_run(team, status=RunStatus.QUEUED)
    assert [say(team, run).status_code for _ in range(3)] == [201, 201, 409]
    assert RunMessage.objects.count() == 2


def test_a_blank_message_is_a_422_naming_the_field(team: Team) -> None:
    response = say(team, make_run(team, status=RunStatus.RUNNING), "  ")
    assert response.status_code == 422
    assert response.json()["errors"] == [{"field": "text", "message": "Write a message for the agent."}]


def test_viewers_may_watch_but_not_talk_and_outsiders_are_told_nothing(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    refused = say(team, run, who="viewer")
    assert refused.status_code == 403
    assert refused.json()["detail"] == "Only owners, admins and members of this workspace can talk to its agents."
    assert say(team, run, who="outsider").status_code == 404
    assert not RunMessage.objects.exists()
