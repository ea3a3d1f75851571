"""A creation's versions through the API: a refine asks for the next one (retried safely
with an Idempotency-Key), the list says who asked for what and which is shown, and a
restore chooses the one the creation shows."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from creations.models import Creation, Run, RunStatus
from creations.runs.state import run_finish
from tests.support.api import ApiClient, api_as
from tests.support.artifacts import Output, add_artifact
from tests.support.factories import ModelEndpointFactory, RunFactory
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db

BIGGER = "make the title bigger"


def first_version(team: Team, **fields: Any) -> Run:
    """v1 of the owner's creation, made with a model of the workspace, ended unless `status` says otherwise."""
    fields.setdefault("finished", True)
    return RunFactory.create(
        creation__workspace=team.workspace,
        creation__author=team.owner,
        creation__model_endpoint=ModelEndpointFactory.create(workspace=team.workspace),
        **fields,
    )


def finish(run_id: int, status: RunStatus = RunStatus.SUCCEEDED) -> None:
    Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(status=RunStatus.RUNNING)
    assert run_finish(run_id=run_id, status=status, reason="The agent submitted its work.")


def refine(client: ApiClient, run_id: int, instruction: str = BIGGER, **headers: str) -> Any:
    return client.post(f"/api/v1/runs/{run_id}/refine", {"instruction": instruction}, headers=headers)


def test_a_refine_queues_the_next_version_continuing_from_the_run(team: Team) -> None:
    v1 = first_version(team)
    response = refine(api_as(team.member), v1.pk)
    assert response.status_code == 201, response.content
    v2 = response.json()
    assert (v2["creation_id"], v2["version"], v2["parent_id"], v2["instruction"]) == (v1.creation_id, 2, v1.pk, BIGGER)
    assert (v2["status"], v2["summary"]) == ("queued", "")
    read = api_as(team.viewer).get(f"/api/v1/runs/{v2['id']}").json()
    assert (read["version"], read["parent_id"], read["instruction"]) == (2, v1.pk, BIGGER)
    assert Run.objects.get(pk=v2["id"]).started_by == team.member


def test_the_same_idempotency_key_answers_the_version_already_asked_for(team: Team) -> None:
    v1 = first_version(team)
    client, key = api_as(team.member), str(uuid.uuid4())
    first = refine(client, v1.pk, **{"Idempotency-Key": key})
    again = refine(client, v1.pk, **{"Idempotency-Key": key})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again["Idempotent-Replayed"] == "true"
    assert first.json()["id"] == again.json()["id"]
    assert Run.objects.filter(creation=v1.creation).count() == 2

    other = refine(client, v1.pk, "make it green", **{"Idempotency-Key": key})
    assert other.status_code == 422
    assert "used for a different request" in other.json()["detail"]
    elsewhere = refine(client, first_version(team).pk, **{"Idempotency-Key": key})
    assert elsewhere.status_code == 422
    assert Run.objects.count() == 3


def test_refining_a_run_still_going_is_a_conflict_saying_so(team: Team) -> None:
    going = first_version(team, finished=False, status=RunStatus.RUNNING)
    response = refine(api_as(team.member), going.pk)
    assert response.status_code == 409, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["detail"] == "v1 is still going: refine it once it has ended (or cancel it)."
    assert Run.objects.count() == 1


def test_a_blank_instruction_is_a_422_naming_the_field(team: Team) -> None:
    response = refine(api_as(team.member), first_version(team).pk, "   ")
    assert response.status_code == 422
    assert response.json()["errors"] == [{"field": "instruction", "message": "Say what should change."}]


def test_viewers_are_refused_and_outsiders_told_nothing(team: Team) -> None:
    v1 = first_version(team)
    refused = refine(api_as(team.viewer), v1.pk)
    assert refused.status_code == 403
    assert refused.json()["detail"] == "Only owners, admins and members of this workspace can start runs."
    assert refine(api_as(team.outsider), v1.pk).status_code == 404
    assert api_as(team.outsider).get(f"/api/v1/runs/{v1.pk}/versions").status_code == 404
    assert api_as(team.viewer).post(f"/api/v1/runs/{v1.pk}/restore").status_code == 403
    assert Run.objects.count() == 1


@pytest.mark.usefixtures("rate_limit_clock")
def test_refines_count_under_the_submission_limit(team: Team, settings: Any) -> None:
    settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE = 1
    v1 = first_version(team)
    assert refine(api_as(team.member), v1.pk).status_code == 201
    assert refine(api_as(team.member), v1.pk).status_code == 429


def test_versions_are_listed_newest_first_with_who_asked_and_which_is_shown(team: Team) -> None:
    v1 = first_version(team, finished=False)
    finish(v1.pk)
    v2_id = refine(api_as(team.member), v1.pk).json()["id"]
    finish(v2_id, RunStatus.FAILED)
    v3_id = refine(api_as(team.owner), v1.pk, "make it green").json()["id"]

    listing = api_as(team.viewer).get(f"/api/v1/runs/{v2_id}/versions")
    assert listing.status_code == 200, listing.content
    body = listing.json()
    assert (body["creation_id"], body["shown_run_id"]) == (v1.creation_id, v1.pk)
    rows = [
        (v["id"], v["version"], v["parent_version"], v["asked_by"], v["instruction"], v["status"], v["shown"])
        for v in body["versions"]
    ]
    assert rows == [
        (v3_id, 3, 1, "alice", "make it green", "queued", False),
        (v2_id, 2, 1, "bob", BIGGER, "failed", False),
        (v1.pk, 1, None, "alice", "", "succeeded", True),
    ]
    assert body["versions"][1]["parent_id"] == v1.pk
    assert body["versions"][0]["web_url"].endswith(f"/runs/{v3_id}/")


def test_restore_chooses_the_version_the_creation_shows(team: Team) -> None:
    v1 = first_version(team, finished=False)
    finish(v1.pk)
    v2_id = refine(api_as(team.member), v1.pk).json()["id"]
    finish(v2_id)
    assert Creation.objects.get(pk=v1.creation_id).shown_run_id == v2_id

    restored = api_as(team.member).post(f"/api/v1/runs/{v1.pk}/restore")
    assert restored.status_code == 200, restored.content
    assert restored.json()["shown_run_id"] == v1.pk
    assert [v["shown"] for v in restored.json()["versions"]] == [False, True]
    assert Creation.objects.get(pk=v1.creation_id).shown_run_id == v1.pk


def test_restoring_a_version_still_going_is_a_conflict(team: Team) -> None:
    v1 = first_version(team)
    v2_id = refine(api_as(team.member), v1.pk).json()["id"]
    response = api_as(team.member).post(f"/api/v1/runs/{v2_id}/restore")
    assert response.status_code == 409
    assert response.json()["detail"] == "v2 is still going: it can be shown once it has ended."
    assert Creation.objects.get(pk=v1.creation_id).shown_run_id is None


def test_the_list_takes_as_many_queries_for_many_versions_as_for_two(team: Team) -> None:
    v1 = first_version(team)
    client = api_as(team.member)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(f"/api/v1/runs/{v1.pk}/versions").status_code == 200
        return len(captured)

    RunFactory.create(creation=v1.creation, parent=v1, instruction="a", started_by=team.member)
    queries()  # the token's first use is recorded once
    with_two = queries()
    for _ in range(6):
        RunFactory.create(creation=v1.creation, parent=v1, instruction="b", started_by=team.owner)
    assert queries() == with_two


def test_a_scheduled_refresh_that_changed_nothing_is_listed_as_unchanged(team: Team) -> None:
    v1 = first_version(team)
    add_artifact(v1, Output("report.md", b"# Week 1\n"))
    same = RunFactory.create(creation=v1.creation, parent=v1, version=2, scheduled=True, finished=True)
    add_artifact(same, Output("report.md", b"# Week 1\n"))
    changed = RunFactory.create(creation=v1.creation, parent=same, version=3, scheduled=True, finished=True)
    add_artifact(changed, Output("report.md", b"# Week 3\n"))
    by_hand = RunFactory.create(creation=v1.creation, parent=changed, version=4, finished=True)
    add_artifact(by_hand, Output("report.md", b"# Week 3\n"))  # the same files, but nobody's schedule made it

    listed = api_as(team.viewer).get(f"/api/v1/runs/{v1.pk}/versions").json()["versions"]
    assert [(v["version"], v["unchanged"]) for v in listed] == [(4, False), (3, False), (2, True), (1, False)]
