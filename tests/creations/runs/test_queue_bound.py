"""A workspace may have at most RUN_QUEUED_MAX_PER_WORKSPACE runs queued: a new run past it
(a submission, a run again, a refine, a fork) is refused before anything of it is written,
saying why; the form keeps the brief, the API answers 429 with the sentence. The check costs
the same however many runs are queued, and submissions at the same moment take turns at it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from creations.models import Creation, Run, RunStatus
from creations.runs.admission import RunQueueFull
from creations.runs.services import creation_fork, creation_submit, run_cancel, run_refine, run_rerun
from tests.support import require
from tests.support.api import api_as
from tests.support.at_once import at_once
from tests.support.factories import ModelEndpointFactory, RunFactory, UserFactory, WorkspaceFactory, make_run
from tests.support.fixtures.accounts import Team

FULL = (
    "This workspace has 3 runs waiting to start, as many as it may queue: wait for some of them to start, "
    "or cancel some, then ask again."
)


@pytest.fixture
def bound_of_three(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.RUN_QUEUED_MAX_PER_WORKSPACE = 3
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)


def queue_up(team: Team, count: int = 3) -> list[Run]:
    return [make_run(team, status=RunStatus.QUEUED) for _ in range(count)]


def finished(team: Team) -> Run:
    endpoint = ModelEndpointFactory.create(workspace=team.workspace)
    return make_run(team, status=RunStatus.SUCCEEDED, finished=True, creation__model_endpoint=endpoint)


@pytest.mark.django_db
@pytest.mark.usefixtures("bound_of_three")
def test_a_full_queue_refuses_every_kind_of_new_run_and_room_comes_back(team: Team) -> None:
    done = finished(team)
    make_run(team, status=RunStatus.RUNNING)  # going runs hold a slot, not a place in the queue
    make_run(team, finished=True, status=RunStatus.CANCELLED)  # and ended ones nothing
    RunFactory.create_batch(5, status=RunStatus.QUEUED)  # another workspace's queue is its own
    waiting = queue_up(team)

    for start in (
        lambda: creation_submit(workspace=team.workspace, author=team.member, brief="a poster"),
        lambda: run_rerun(creation=done.creation, user=team.member),
        lambda: run_refine(run=done, user=team.member, instruction="make it red"),
        lambda: creation_fork(creation=done.creation, user=team.member, brief="the same, in blue"),
    ):
        with pytest.raises(RunQueueFull) as refused:
            start()
        assert refused.value.messages == [FULL]
    assert Run.objects.filter(creation__workspace=team.workspace, status=RunStatus.QUEUED).count() == 3

    run_cancel(run=waiting[0], user=team.owner)
    again = creation_submit(workspace=team.workspace, author=team.member, brief="a poster")
    assert again.status == RunStatus.QUEUED


@pytest.mark.django_db
@pytest.mark.usefixtures("bound_of_three")
def test_the_form_answers_429_says_why_and_keeps_the_brief(team: Team, client: Client) -> None:
    queue_up(team)
    client.force_login(team.member)

    response = client.post(
        reverse("creation_new", args=[team.workspace.slug]),
        {"brief": "A map of these stops", "visibility": "workspace", "uploads": [SimpleUploadedFile("s.csv", b"a")]},
    )

    assert response.status_code == 429
    html = response.content.decode()
    assert FULL in html
    assert "A map of these stops</textarea>" in html
    assert "choose your files again (s.csv)" in html
    assert Creation.objects.filter(brief="A map of these stops").count() == 0


@pytest.mark.django_db
@pytest.mark.usefixtures("bound_of_three")
def test_the_refine_and_fork_forms_answer_429_and_keep_what_was_typed(team: Team, client: Client) -> None:
    done = finished(team)
    queue_up(team)
    client.force_login(team.member)

    refine = client.post(reverse("run_refine", args=[done.pk]), {"instruction": "make the title bigger"})
    fork = client.post(reverse("creation_fork", args=[done.creation_id]), {"brief": "The same, but in red"})

    assert (refine.status_code, fork.status_code) == (429, 429)
    assert FULL in refine.content.decode()
    assert "make the title bigger</textarea>" in refine.content.decode()
    assert "The same, but in red</textarea>" in fork.content.decode()


@pytest.mark.django_db
@pytest.mark.usefixtures("bound_of_three")
def test_the_api_answers_429_with_the_sentence(team: Team) -> None:
    done = finished(team)
    queue_up(team)
    client = api_as(team.member)

    answers = [
        client.post(f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "a poster"}),
        client.post(f"/api/v1/runs/{done.pk}/rerun"),
        client.post(f"/api/v1/runs/{done.pk}/refine", {"instruction": "make it red"}),
        client.post(f"/api/v1/runs/{done.pk}/fork", {"brief": "the same, in blue"}),
    ]

    for answer in answers:
        assert answer.status_code == 429, answer.content
        assert answer["Content-Type"] == "application/problem+json"
        assert answer.json()["detail"] == FULL
    assert Run.objects.count() == 4


# --- with thousands queued -------------------------------------------------------------------


def queue_in_other_workspaces(runs: int, *, workspaces: int = 30) -> None:
    author = UserFactory.create()
    places = WorkspaceFactory.create_batch(workspaces)
    creations = Creation.objects.bulk_create(
        [Creation(workspace=places[i % workspaces], author=author, brief="b") for i in range(runs)]
    )
    Run.objects.bulk_create(
        [Run(creation=creation, workspace_id=creation.workspace_id, version=1) for creation in creations]
    )


def submission_queries(team: Team) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        creation_submit(workspace=team.workspace, author=team.member, brief="a poster")
    return [query["sql"] for query in captured.captured_queries]


@pytest.mark.django_db
def test_a_submission_costs_the_same_queries_with_thousands_queued(
    team: Team, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.RUN_QUEUED_MAX_PER_WORKSPACE = 100
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)
    queue_up(team, 5)  # more than its slots: the new run is told it waits, whatever the queue's length
    few = submission_queries(team)
    queue_in_other_workspaces(3000)
    queue_up(team, 90)  # and most of its own bound

    many = submission_queries(team)

    assert len(few) == len(many) == 29  # 9 of them tell its starter it waits (creations.notifications)


@pytest.mark.django_db
def test_the_queue_is_counted_from_the_runs_queued_now_not_every_run_ever(team: Team, settings: Any) -> None:
    """The plan PostgreSQL picks for the bound's count, with 3,000 runs queued elsewhere and
    5,000 ended runs in the workspace: it reads the queued runs from an index of queued runs,
    never every run (a scan of the table, or of every run by creation)."""
    require(connection.vendor == "postgresql", "PostgreSQL (the plan is PostgreSQL's)")
    queue_in_other_workspaces(3000)
    author = UserFactory.create()
    ours = Creation.objects.bulk_create(
        [Creation(workspace=team.workspace, author=author, brief="b") for _ in range(5000)]
    )
    Run.objects.bulk_create(
        [
            Run(creation=c, workspace_id=c.workspace_id, version=1, status="succeeded", finished_at=c.created_at)
            for c in ours
        ]
    )
    Run.objects.bulk_create([Run(creation=c, workspace_id=c.workspace_id, version=2) for c in ours[:50]])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    count = next(sql for sql in submission_queries(team) if "COUNT(*)" in sql and "'queued'" in sql)

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {count}")
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "Seq Scan on creations_run" not in plan, plan
    assert "creations_run_creation_id" not in plan, plan
    assert re.search(r"Index (Only )?Scan (using|on) (run_queued|creations_r_status_\w+)", plan), plan


# --- at the same moment ----------------------------------------------------------------------


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_submissions_at_the_same_moment_cannot_pass_the_bound_together(
    team: Team, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.RUN_QUEUED_MAX_PER_WORKSPACE = 1
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)

    def submit(author: Any, name: str) -> Callable[[], Any]:
        files = [SimpleUploadedFile(name, b"a,b\n")]
        return lambda: creation_submit(workspace=team.workspace, author=author, brief="a map", files=files)

    answers = at_once([submit(team.member, "a.csv"), submit(team.owner, "b.csv")], monkeypatch)

    assert sorted(type(answer).__name__ for answer in answers) == ["Run", "RunQueueFull"]
    assert isinstance(next(a for a in answers if not isinstance(a, Run)), ValidationError)
    assert Run.objects.filter(status=RunStatus.QUEUED).count() == 1
