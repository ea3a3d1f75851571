"""The storage quota holds wherever bytes come in: files given with a brief (even for runs
cancelled at once), files a fork copies, uploads through the API, and any new run once the
storage is full. Requests at the same moment take turns on the workspace's row, so together
they cannot pass it either."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from api.models import StagedInput
from creations.models import Creation, InputFile, Run, RunStatus
from creations.runs.services import creation_fork, creation_submit, run_cancel, run_refine, run_rerun
from creations.usage.selectors import workspace_storage_bytes
from tests.support.api import ApiClient, api_as, token_for
from tests.support.at_once import at_once
from tests.support.factories import ArtifactFactory, InputFileFactory, ModelEndpointFactory, make_run
from tests.support.fixtures.accounts import Team
from workspaces.models import Workspace

FULL_MESSAGE = (
    "This workspace's storage is full (it keeps 10.0 KB of its 10.0 KB): a new run could keep none of its files. "
    "Deleting creations the workspace no longer needs frees space."
)


def quota(workspace: Workspace, size: int) -> None:
    Workspace.objects.filter(pk=workspace.pk).update(quota_storage_bytes=size)
    workspace.refresh_from_db()


def csv(name: str, size: int) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, b"x" * size, content_type="text/csv")


@pytest.fixture
def nothing_enqueued(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)


@pytest.mark.django_db
@pytest.mark.usefixtures("nothing_enqueued")
def test_inputs_of_runs_cancelled_at_once_cannot_fill_the_storage(
    team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    quota(team.workspace, 10_000)

    def submit_and_cancel(number: int) -> None:
        run = creation_submit(
            workspace=team.workspace, author=team.member, brief="a map", files=[csv(f"stops-{number}.csv", 4000)]
        )
        run_cancel(run=run, user=team.member)
        assert Run.objects.get(pk=run.pk).status == RunStatus.CANCELLED

    with django_capture_on_commit_callbacks(execute=True):
        submit_and_cancel(1)
        submit_and_cancel(2)
        with pytest.raises(ValidationError) as refused:
            submit_and_cancel(3)
    message = (
        "These files (3.9 KB) do not fit in this workspace's storage: it keeps 7.8 KB of its 9.8 KB. "
        "Deleting creations the workspace no longer needs frees space."
    )
    assert refused.value.messages == [message]
    assert Creation.objects.count() == 2
    assert InputFile.objects.count() == 2
    assert workspace_storage_bytes(workspace=team.workspace) == 8000


@pytest.mark.django_db
@pytest.mark.usefixtures("nothing_enqueued")
def test_a_full_storage_refuses_new_runs_of_every_kind(team: Team) -> None:
    endpoint = ModelEndpointFactory.create(workspace=team.workspace)
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True, creation__model_endpoint=endpoint)
    ArtifactFactory.create(run=run, size=10_000, derived_bytes=240)
    quota(team.workspace, 10_240)

    for start in (
        lambda: creation_submit(workspace=team.workspace, author=team.member, brief="a poster"),
        lambda: run_rerun(creation=run.creation, user=team.member),
        lambda: run_refine(run=run, user=team.member, instruction="make it red"),
        lambda: creation_fork(creation=run.creation, user=team.member, brief="the same, in blue"),
    ):
        with pytest.raises(ValidationError) as refused:
            start()
        assert refused.value.messages == [FULL_MESSAGE]
    assert Run.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.usefixtures("nothing_enqueued")
def test_a_fork_counts_the_inputs_it_copies(team: Team) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    InputFileFactory.create(creation=run.creation, size=8)  # the factory's file holds 8 bytes
    quota(team.workspace, 15)

    with pytest.raises(ValidationError, match=r"These files \(8 bytes\) do not fit"):
        creation_fork(creation=run.creation, user=team.member, brief="the same, in blue")
    assert Creation.objects.count() == 1


@pytest.mark.django_db
def test_the_form_says_why_and_keeps_the_brief(team: Team, client: Client) -> None:
    quota(team.workspace, 100)
    client.force_login(team.member)

    response = client.post(
        reverse("creation_new", args=[team.workspace.slug]),
        {"brief": "A map of these stops", "visibility": "workspace", "uploads": [csv("stops.csv", 101)]},
    )

    assert response.status_code == 400
    html = response.content.decode()
    assert "These files (101 bytes) do not fit in this workspace&#x27;s storage" in html
    assert "A map of these stops</textarea>" in html
    assert "choose your files again (stops.csv)" in html
    assert not Creation.objects.exists()


@pytest.mark.django_db
def test_api_uploads_count_and_are_refused_past_the_quota(team: Team) -> None:
    quota(team.workspace, 100)
    client = api_as(team.member)
    url = f"/api/v1/workspaces/{team.workspace.slug}/inputs"

    assert client.post(url, {"files": [csv("a.csv", 60)]}, multipart=True).status_code == 201
    refused = client.post(url, {"files": [csv("b.csv", 41)]}, multipart=True)

    assert refused.status_code == 422
    assert refused["Content-Type"] == "application/problem+json"
    assert refused.json()["detail"].startswith("These files (41 bytes) do not fit in this workspace's storage")
    assert workspace_storage_bytes(workspace=team.workspace) == 60
    # Starting a run moves the upload into its inputs: the same bytes, counted once, still fit.
    (staged,) = StagedInput.objects.all()
    started = client.post(f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "x", "input_ids": [staged.pk]})
    assert started.status_code == 201, started.content
    assert workspace_storage_bytes(workspace=team.workspace) == 60


# --- at the same moment ----------------------------------------------------------------------


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_uploads_at_the_same_moment_cannot_pass_the_quota_together(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    quota(team.workspace, 1000)
    url = f"/api/v1/workspaces/{team.workspace.slug}/inputs"
    clients = [ApiClient(token_for(team.member)), ApiClient(token_for(team.owner))]

    answers = at_once(
        [
            lambda: clients[0].post(url, {"files": [csv("a.csv", 600)]}, multipart=True),
            lambda: clients[1].post(url, {"files": [csv("b.csv", 600)]}, multipart=True),
        ],
        monkeypatch,
    )

    assert sorted(answer.status_code for answer in answers) == [201, 422]
    assert StagedInput.objects.count() == 1
    assert workspace_storage_bytes(workspace=team.workspace) == 600


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("nothing_enqueued")
def test_submissions_at_the_same_moment_cannot_pass_the_quota_together(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    quota(team.workspace, 1000)

    def submit(author: Any, name: str) -> Callable[[], Any]:
        return lambda: creation_submit(workspace=team.workspace, author=author, brief="a map", files=[csv(name, 600)])

    answers = at_once([submit(team.member, "a.csv"), submit(team.owner, "b.csv")], monkeypatch)

    assert sorted(type(answer).__name__ for answer in answers) == ["Run", "ValidationError"]
    assert InputFile.objects.count() == 1
    assert workspace_storage_bytes(workspace=team.workspace) == 600
