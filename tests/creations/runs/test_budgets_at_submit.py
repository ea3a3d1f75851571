"""A workspace that has used a monthly budget up starts nothing: no creation, no run, no
sandbox, and the person is told which budget and when it renews, keeping what they typed."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from creations.models import Creation, InputFile, Run, RunStatus, UsageRecord, Visibility
from creations.runs.services import creation_fork, creation_submit, run_rerun
from creations.usage.selectors import budget_renews_at, month_start
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint, Workspace
from workspaces.services import workspace_create

pytestmark = pytest.mark.django_db


def spend_all(workspace: Workspace, *, tokens: bool = True) -> str:
    """Use up the workspace's tokens (or sandbox time) this month; returns the message the refusal gives."""
    Workspace.objects.filter(pk=workspace.pk).update(quota_month_tokens=1000, quota_month_sandbox_seconds=3600)
    UsageRecord.objects.create(
        workspace=workspace,
        model_name="scripted",
        status=RunStatus.SUCCEEDED,
        prompt_tokens=1000 if tokens else 0,
        sandbox_seconds=0 if tokens else 3600,
        recorded_at=timezone.now(),
    )
    workspace.refresh_from_db()
    spent = "1,000 model tokens" if tokens else "1 hour of sandbox time"
    month, renews = month_start(), budget_renews_at()
    return f"This workspace has used its {spent} for {month:%B}; it renews on {renews.day} {renews:%B} (UTC)."


@pytest.fixture
def nothing_enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    enqueued: list[int] = []
    monkeypatch.setattr("creations.runs.queue.send_wake_up", enqueued.append)
    return enqueued


@pytest.mark.parametrize("tokens", [True, False], ids=["tokens", "sandbox-time"])
def test_a_submission_is_refused_before_anything_is_written(
    team: Team, tokens: bool, nothing_enqueued: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    message = spend_all(team.workspace, tokens=tokens)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ValidationError) as refused:
        creation_submit(
            workspace=team.workspace,
            author=team.member,
            brief="a poster for a jazz night",
            files=[SimpleUploadedFile("set.csv", b"a,b\n")],
        )
    assert refused.value.messages == [message]
    assert not Creation.objects.exists()
    assert not InputFile.objects.exists()
    assert not Run.objects.exists()  # so no worker can start a sandbox for it
    assert nothing_enqueued == []


def test_run_again_and_fork_are_refused_too(
    team: Team, nothing_enqueued: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    message = spend_all(team.workspace)
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(ValidationError) as refused:
            run_rerun(creation=run.creation, user=team.member)
        assert refused.value.messages == [message]
        with pytest.raises(ValidationError):
            creation_fork(creation=run.creation, user=team.member, brief="the same, in red")
    assert Run.objects.count() == 1
    assert Creation.objects.count() == 1
    assert nothing_enqueued == []


def test_a_fork_is_checked_against_the_workspace_it_lands_in(team: Team, nothing_enqueued: list[int]) -> None:
    original = make_run(team, status=RunStatus.SUCCEEDED, finished=True, visibility=Visibility.PUBLIC).creation
    spend_all(team.workspace)
    mine = workspace_create(name="Mine", owner=team.outsider)
    fork = creation_fork(creation=original, user=team.outsider, brief="my version", workspace=mine)
    assert fork.creation.workspace == mine
    spend_all(mine)
    with pytest.raises(ValidationError, match="1,000 model tokens"):
        creation_fork(creation=original, user=team.outsider, brief="again", workspace=mine)


def test_the_new_creation_form_keeps_what_was_typed_and_says_why(team: Team, client: Client) -> None:
    message = spend_all(team.workspace)
    endpoint = ModelEndpoint.objects.create(
        workspace=team.workspace, name="Our model", base_url="http://127.0.0.1:9/v1", model="m"
    )
    client.force_login(team.member)
    response = client.post(
        reverse("creation_new", args=[team.workspace.slug]),
        {
            "brief": "A calm piano piece in D minor",
            "title": "Calm piece",
            "visibility": Visibility.PRIVATE,
            "model": str(endpoint.pk),
            "max_steps": "7",
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert "A calm piano piece in D minor</textarea>" in html
    assert 'value="Calm piece"' in html
    assert f'<option value="{endpoint.pk}" selected>' in html
    (private_choice,) = re.findall(r'<input[^>]*value="private"[^>]*>', html)
    assert "checked" in private_choice
    assert 'value="7"' in html
    assert "choose your files again" not in html
    assert not Creation.objects.exists()


def test_a_refused_form_with_files_asks_for_them_again(team: Team, client: Client) -> None:
    spend_all(team.workspace, tokens=False)
    client.force_login(team.member)
    response = client.post(
        reverse("creation_new", args=[team.workspace.slug]),
        {
            "brief": "A map of these stops",
            "visibility": Visibility.WORKSPACE,
            "uploads": [SimpleUploadedFile("stops.csv", b"a,b\n"), SimpleUploadedFile("notes.txt", b"hi")],
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "of sandbox time for" in html
    assert "choose your files again (stops.csv, notes.txt)" in html
    assert not Creation.objects.exists()


def test_run_again_from_the_page_is_refused_with_the_message(team: Team, client: Client) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    message = spend_all(team.workspace)
    client.force_login(team.member)
    response = client.post(reverse("creation_rerun", args=[run.creation_id]), follow=True)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Run.objects.count() == 1


def test_a_refused_fork_keeps_the_edited_brief(team: Team, client: Client) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    message = spend_all(team.workspace)
    client.force_login(team.member)
    response = client.post(reverse("creation_fork", args=[run.creation_id]), {"brief": "The same, but in red"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "The fork was not started" in html
    assert message in html
    assert "The same, but in red</textarea>" in html
    assert Creation.objects.count() == 1
