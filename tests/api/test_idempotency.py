"""`Idempotency-Key`: a create sent twice, or twice at once, makes one run."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from django.db import connection

from creations.models import Run
from tests.support.api import ApiClient, token_for
from tests.support.fixtures.accounts import Team


def create(client: ApiClient, team: Team, key: str, brief: str = "a poster for the fair") -> Any:
    return client.post(
        f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": brief}, headers={"Idempotency-Key": key}
    )


@pytest.mark.django_db
def test_the_same_key_twice_answers_the_first_run(team: Team) -> None:
    client, key = ApiClient(token_for(team.member)), str(uuid.uuid4())
    first, second = create(client, team, key), create(client, team, key)
    assert (first.status_code, second.status_code) == (201, 200)
    assert second["Idempotent-Replayed"] == "true"
    assert first.json()["id"] == second.json()["id"]
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_a_key_reused_for_another_request_is_refused(team: Team) -> None:
    client, key = ApiClient(token_for(team.member)), str(uuid.uuid4())
    assert create(client, team, key).status_code == 201
    reused = create(client, team, key, brief="something else")
    assert reused.status_code == 422
    assert "used for a different request" in reused.json()["detail"]
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_keys_are_per_person(team: Team) -> None:
    key = str(uuid.uuid4())
    assert create(ApiClient(token_for(team.member)), team, key).status_code == 201
    assert create(ApiClient(token_for(team.owner)), team, key).status_code == 201
    assert Run.objects.count() == 2


@pytest.mark.django_db
def test_without_a_key_each_request_makes_a_run(team: Team) -> None:
    client = ApiClient(token_for(team.member))
    for _ in range(2):
        assert client.post(f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "x"}).status_code == 201
    assert Run.objects.count() == 2


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_same_request_sent_at_once_makes_one_run(team: Team, platform_on_own_redis: str) -> None:
    """Four threads, each its own database connection, released together (the run's wake-up goes to a
    Redis of this test's own)."""
    raw, key = token_for(team.member), str(uuid.uuid4())
    start, answers = threading.Barrier(4), []

    def send() -> None:
        try:
            client = ApiClient(raw)
            start.wait()
            answers.append(create(client, team, key))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 201]
    assert len({a.json()["id"] for a in answers}) == 1
    assert Run.objects.count() == 1
