"""`Idempotency-Key`: a create sent twice, or twice at once, makes one run."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from creations.models import Run
from tests.support.api import ApiClient, token_for
from tests.support.factories import ModelEndpointFactory, RunFactory
from tests.support.fixtures.accounts import Team
from workspaces.models import Membership, Role
from workspaces.permissions import START_RUNS_REFUSED
from workspaces.services import membership_change_role, membership_remove, workspace_create


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


# --- A replay is a request like any other: for its workspace, and for who may still have the run ---


@pytest.mark.django_db
def test_the_same_key_and_body_sent_to_another_workspace_is_another_request(team: Team) -> None:
    second = workspace_create(name="Side project", owner=team.member)
    client, key = ApiClient(token_for(team.member)), str(uuid.uuid4())
    assert create(client, team, key).status_code == 201

    elsewhere = client.post(
        f"/api/v1/workspaces/{second.slug}/runs", {"brief": "a poster for the fair"}, headers={"Idempotency-Key": key}
    )

    assert elsewhere.status_code == 422
    assert "used for a different request" in elsewhere.json()["detail"]
    assert list(Run.objects.values_list("creation__workspace__slug", flat=True)) == [team.workspace.slug]


def _remove(team: Team, who: User) -> None:
    membership_remove(membership=Membership.objects.get(workspace=team.workspace, user=who), actor=team.owner)


@pytest.mark.django_db
def test_a_member_removed_since_replays_a_create_and_gets_not_found(team: Team) -> None:
    client, key = ApiClient(token_for(team.member)), str(uuid.uuid4())
    assert create(client, team, key).status_code == 201
    _remove(team, team.member)

    replay = create(client, team, key)

    assert replay.status_code == 404
    assert "Idempotent-Replayed" not in replay


@pytest.mark.django_db
def test_a_member_made_viewer_since_replays_a_create_and_is_refused_as_a_viewer_is(team: Team) -> None:
    client, key = ApiClient(token_for(team.member)), str(uuid.uuid4())
    made = create(client, team, key)
    assert made.status_code == 201
    membership = Membership.objects.get(workspace=team.workspace, user=team.member)
    membership_change_role(membership=membership, actor=team.owner, role=Role.VIEWER)

    replay = create(client, team, key)
    fresh = create(client, team, str(uuid.uuid4()))

    assert (replay.status_code, fresh.status_code) == (403, 403)
    assert replay.json()["detail"] == fresh.json()["detail"] == START_RUNS_REFUSED
    assert str(made.json()["id"]) not in replay.content.decode()


@pytest.mark.django_db
def test_a_member_removed_since_replays_a_refine_of_a_public_creation_and_is_refused(team: Team) -> None:
    v1 = RunFactory.create(
        creation__workspace=team.workspace,
        creation__author=team.owner,
        creation__visibility="public",
        creation__model_endpoint=ModelEndpointFactory.create(workspace=team.workspace),
        finished=True,
    )
    client, key = ApiClient(token_for(team.member)), str(uuid.uuid4())

    def refine() -> Any:
        return client.post(f"/api/v1/runs/{v1.pk}/refine", {"instruction": "bigger"}, headers={"Idempotency-Key": key})

    assert refine().status_code == 201
    _remove(team, team.member)

    replay = refine()

    assert replay.status_code == 403  # they still see the public run, but may start nothing in its workspace
    assert replay.json()["detail"] == START_RUNS_REFUSED
    assert "Idempotent-Replayed" not in replay
