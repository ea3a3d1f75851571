"""Input files through the API: uploaded under the web form's rules, named when the
run starts, used once, and gone when nobody uses them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from api.inputs import staged_inputs_expire
from api.models import StagedInput
from creations.models import Creation
from tests.support.api import ApiClient, api_as
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def upload(client: ApiClient, team: Team, *files: SimpleUploadedFile) -> Any:
    return client.post(f"/api/v1/workspaces/{team.workspace.slug}/inputs", {"files": list(files)}, multipart=True)


def csv(name: str = "stops.csv", data: bytes = b"name,lat,lon\nA,1,2\n") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="text/csv")


def test_uploaded_inputs_reach_the_run_under_their_names(team: Team) -> None:
    client = api_as(team.member)
    response = upload(client, team, csv(), csv("notes.txt", b"hello"))
    assert response.status_code == 201, response.content
    ids = [item["id"] for item in response.json()]
    assert [item["name"] for item in response.json()] == ["stops.csv", "notes.txt"]
    run = client.post(f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "map these", "input_ids": ids})
    assert run.status_code == 201, run.content
    creation = Creation.objects.get(pk=run.json()["creation_id"])
    stored = {i.name: i.file.read() for i in creation.inputs.all()}
    assert stored == {"stops.csv": b"name,lat,lon\nA,1,2\n", "notes.txt": b"hello"}
    assert not StagedInput.objects.exists()  # used once
    again = client.post(f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "again", "input_ids": ids})
    assert again.status_code == 422
    assert "upload it again" in again.json()["detail"]


def test_the_web_forms_rules_apply(team: Team, settings: Any) -> None:
    settings.UPLOAD_MAX_FILE_BYTES = 10
    client = api_as(team.member)
    response = upload(client, team, csv("big.csv", b"x" * 11), SimpleUploadedFile("tool.exe", b"MZ"))
    assert response.status_code == 422
    messages = [error["message"] for error in response.json()["errors"]]
    assert any("big.csv: too large" in m for m in messages), messages
    assert any("tool.exe: this type of file is not accepted" in m for m in messages), messages
    assert not StagedInput.objects.exists()


def test_no_files_is_explained(team: Team) -> None:
    response = api_as(team.member).post(f"/api/v1/workspaces/{team.workspace.slug}/inputs", {}, multipart=True)
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"


def test_someone_elses_upload_cannot_be_used(team: Team) -> None:
    ids = [item["id"] for item in upload(api_as(team.owner), team, csv()).json()]
    response = api_as(team.member).post(
        f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": "map", "input_ids": ids}
    )
    assert response.status_code == 422
    assert StagedInput.objects.count() == 1


def test_viewers_read_tokens_and_outsiders_cannot_upload(team: Team) -> None:
    assert upload(api_as(team.viewer), team, csv()).status_code == 403
    assert upload(api_as(team.member, scope="read"), team, csv()).status_code == 403
    assert upload(api_as(team.outsider), team, csv()).status_code == 404
    assert not StagedInput.objects.exists()


def test_one_person_may_keep_only_so_much_waiting(team: Team, settings: Any) -> None:
    settings.API_STAGED_INPUT_MAX_BYTES = 30
    client = api_as(team.member)
    assert upload(client, team, csv("a.csv", b"x" * 20)).status_code == 201
    refused = upload(client, team, csv("b.csv", b"x" * 20))
    assert refused.status_code == 422
    assert "waiting for a run" in refused.json()["detail"]


def test_uploads_nobody_used_expire_with_their_files(
    team: Team, django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    upload(api_as(team.member), team, csv("old.csv"), csv("new.csv"))
    old = StagedInput.objects.get(name="old.csv")
    StagedInput.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=25))
    with django_capture_on_commit_callbacks(execute=True):
        assert staged_inputs_expire() == 1
    assert not default_storage.exists(str(old.file.name))
    assert list(StagedInput.objects.values_list("name", flat=True)) == ["new.csv"]
