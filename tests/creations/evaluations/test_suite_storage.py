"""A suite's task file and input files count in its workspace's storage quota: the usage page
shows them, an upload that would pass the quota is refused naming it (the page's form, the
API's 422) with nothing kept, and deleting the suite frees them."""

from __future__ import annotations

import html
import io
import zipfile
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from creations.evaluations.models import Suite, SuiteFile
from creations.evaluations.suites import suite_delete, suite_upload
from creations.usage.selectors import workspace_storage_bytes
from tests.creations.evaluations.conftest import suite_lines
from tests.support.api import ApiClient, token_for
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

LINE = b'{"id": "t1", "prompt": "What is the answer?", "rule": "number", "expected": "4", "files": ["notes.txt"]}'
NOTES = b"The answer is 4."


def _zipped_notes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", NOTES)
    return buffer.getvalue()


def suite_with_a_file(team: Team) -> Suite:
    return suite_upload(workspace=team.workspace, user=team.member, name="Notes", data=LINE, zip_data=_zipped_notes())


def test_a_suites_files_count_in_storage_and_leave_it_when_it_is_deleted(
    team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    before = workspace_storage_bytes(workspace=team.workspace)
    suite = suite_with_a_file(team)
    assert workspace_storage_bytes(workspace=team.workspace) == before + len(LINE) + len(NOTES)
    with django_capture_on_commit_callbacks(execute=True):
        suite_delete(suite=suite, user=team.member)
    assert workspace_storage_bytes(workspace=team.workspace) == before


def test_the_usage_page_shows_what_suites_keep(team: Team, client: Client) -> None:
    suite_with_a_file(team)
    page = signed_in(client, team.member).get(reverse("workspace_usage", args=[team.workspace.slug]))
    text = html.unescape(page.content.decode()).replace("\xa0", " ")
    assert f"evaluation suites {len(LINE) + len(NOTES)} bytes" in text


def _quota(team: Team, size: int) -> None:
    Workspace.objects.filter(pk=team.workspace.pk).update(quota_storage_bytes=size)


def test_an_upload_past_the_storage_quota_is_refused_on_the_page_naming_it_and_nothing_is_kept(
    team: Team, client: Client
) -> None:
    data = suite_lines(3)
    _quota(team, len(data) - 1)
    page = signed_in(client, team.member).post(
        reverse("suite_upload", args=[team.workspace.slug]),
        {"name": "Squares", "tasks": SimpleUploadedFile("squares.jsonl", data)},
    )
    assert page.status_code == 400
    text = html.unescape(page.content.decode()).replace("\xa0", " ")
    assert f"These files ({len(data)} bytes) do not fit in this workspace's storage" in text
    assert f"it keeps 0 bytes of its {len(data) - 1} bytes" in text
    assert "Nothing was kept." in text
    assert not Suite.objects.exists()

    _quota(team, len(data))
    page = signed_in(client, team.member).post(
        reverse("suite_upload", args=[team.workspace.slug]),
        {"name": "Squares", "tasks": SimpleUploadedFile("squares.jsonl", data)},
    )
    assert page.status_code == 302
    assert Suite.objects.get().task_file_bytes == len(data)


def test_an_upload_whose_input_files_pass_the_quota_is_refused_by_the_api_and_nothing_is_stored(team: Team) -> None:
    _quota(team, len(LINE) + len(NOTES) - 1)
    answer = ApiClient(token_for(team.member)).post(
        f"/api/v1/workspaces/{team.workspace.slug}/suites",
        {
            "tasks": SimpleUploadedFile("notes.jsonl", LINE),
            "files": SimpleUploadedFile("notes.zip", _zipped_notes()),
        },
        multipart=True,
    )
    assert answer.status_code == 422
    said = answer.content.decode().replace("\\u00a0", " ")
    assert f"These files ({len(LINE) + len(NOTES)} bytes) do not fit in this workspace's storage" in said
    assert f"of its {len(LINE) + len(NOTES) - 1} bytes" in said
    assert not Suite.objects.exists()
    assert not SuiteFile.objects.exists()
    assert not default_storage.exists(f"suites/{team.workspace.pk}")


def test_a_suite_uploaded_before_task_files_were_counted_counts_what_its_tasks_hold(team: Team) -> None:
    import importlib

    from django.apps import apps

    migration = importlib.import_module("creations.evaluations.migrations.0003_count_older_suites_task_files")
    suite = suite_with_a_file(team)
    Suite.objects.filter(pk=suite.pk).update(task_file_bytes=0)  # as such a suite was kept
    uncounted = workspace_storage_bytes(workspace=team.workspace)

    migration.count_older_task_files(apps, None)

    counted = workspace_storage_bytes(workspace=team.workspace) - uncounted
    assert counted == len(LINE)  # its one task, written as the format writes it
    migration.count_older_task_files(apps, None)  # a suite counted already is left as it is
    assert workspace_storage_bytes(workspace=team.workspace) - uncounted == counted
