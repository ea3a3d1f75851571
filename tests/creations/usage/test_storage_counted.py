"""A workspace's storage counts every byte it keeps: the inputs given with its briefs (a
cancelled run's too), uploads waiting for a run, its artifacts with their previews and
renditions, its runs' event files and its version snapshots. The usage page shows that
figure, and the quota is checked against it."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from api.models import StagedInput
from creations.events.store import store_events
from creations.models import Artifact, Run, RunSnapshot, RunStatus
from creations.runs.services import creation_submit, run_cancel
from creations.usage.selectors import workspace_month_usage, workspace_storage_bytes
from tests.support.factories import ArtifactFactory, InputFileFactory, WorkspaceFactory, make_run
from tests.support.fixtures.accounts import Team

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


def keep_one_of_each(team: Team) -> dict[str, int]:
    """One stored file of each kind in the team's workspace; the bytes each holds."""
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True, event_file_bytes=40)
    InputFileFactory.create(creation=run.creation, size=8)
    ArtifactFactory.create(run=run, size=1000, derived_bytes=200)
    RunSnapshot.objects.create(run=run, workspace=team.workspace, file="snapshots/x.tar.zst", size=500)
    StagedInput.objects.create(workspace=team.workspace, uploaded_by=team.member, name="a.csv", file="s/a", size=30)
    return {"input": 8, "artifact": 1000, "preview": 200, "event files": 40, "snapshot": 500, "upload": 30}


def test_every_kind_of_stored_file_counts(team: Team) -> None:
    kept = keep_one_of_each(team)
    other = WorkspaceFactory.create()
    StagedInput.objects.create(workspace=other, uploaded_by=team.member, name="b.csv", file="s/b", size=10**6)
    ArtifactFactory.create(size=10**9, derived_bytes=10**6)  # another workspace's

    assert workspace_storage_bytes(workspace=team.workspace) == sum(kept.values()) == 1778
    assert workspace_month_usage(workspace=team.workspace).storage_bytes == 1778
    assert workspace_storage_bytes(workspace=WorkspaceFactory.create()) == 0


def test_inputs_of_a_run_cancelled_while_queued_stay_counted(
    team: Team, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)
    with django_capture_on_commit_callbacks(execute=True):
        run = creation_submit(
            workspace=team.workspace,
            author=team.member,
            brief="a map of these stops",
            files=[SimpleUploadedFile("stops.csv", b"x" * 5000)],
        )
        run_cancel(run=run, user=team.member)
    assert Run.objects.get(pk=run.pk).status == RunStatus.CANCELLED
    assert workspace_storage_bytes(workspace=team.workspace) == 5000


def test_the_files_of_long_event_fields_count(team: Team, settings: Any) -> None:
    settings.RUN_EVENT_PAYLOAD_MAX_BYTES = 4096
    run = make_run(team, status=RunStatus.RUNNING)
    result = {"step": 1, "call_id": "c1", "name": "execute_bash", "output": "y" * 20_000, "is_error": False,
              "exit_code": 0, "duration": 0.5}  # fmt: skip

    store_events(run.pk, [("tool_result", result)])

    run.refresh_from_db()
    (stored,) = run.events.get(kind="tool_result").payload["overflow"].values()
    assert run.event_file_bytes == stored["bytes"] == 20_000
    assert workspace_storage_bytes(workspace=team.workspace) == run.event_file_bytes


def test_the_usage_page_shows_everything_kept(team: Team, client: Client) -> None:
    keep_one_of_each(team)
    client.force_login(team.member)

    response = client.get(reverse("workspace_usage", args=[team.workspace.slug]))

    meters = {meter.key: meter for meter in response.context["meters"]}
    assert meters["storage"].used == 1778
    assert "1.7\xa0KB kept now" in response.content.decode()


def test_what_was_stored_before_the_counters_is_counted_by_the_migration(team: Team) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    artifact = ArtifactFactory.create(run=run, path="tune.mid", size=100)
    artifact.preview.save("preview.png", ContentFile(b"p" * 300), save=False)
    artifact.rendition.save("music.ogg", ContentFile(b"o" * 700), save=False)
    artifact.save()
    gone = ArtifactFactory.create(run=run, path="gone.md", size=5)
    Artifact.objects.filter(pk=gone.pk).update(rendered="rendered/not-there.html")
    long_output = {"output": "", "truncated": True, "overflow": {"output": {"path": "run-events/x.txt", "bytes": 900}}}
    run.events.create(seq=1, kind="tool_result", payload=long_output)
    run.events.create(seq=2, kind="step_started", payload={"step": 2, "remaining": 1})

    migration = importlib.import_module("creations.migrations.0011_stored_file_bytes")
    migration.count_stored_bytes(apps, None)

    assert Artifact.objects.get(pk=artifact.pk).derived_bytes == 1000
    assert Artifact.objects.get(pk=gone.pk).derived_bytes == 0
    assert Run.objects.get(pk=run.pk).event_file_bytes == 900
