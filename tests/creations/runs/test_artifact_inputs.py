"""Starting a creation with earlier artifacts as its inputs: who may take which, and what is copied."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from creations.models import Artifact, Creation, Run, Visibility
from creations.runs import artifact_inputs
from creations.runs.artifact_inputs import numbered_input_name
from creations.runs.services import creation_submit
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from workspaces.models import Role, Workspace
from workspaces.services import membership_add, workspace_create

pytestmark = pytest.mark.django_db

MAP = b'{"type": "FeatureCollection", "features": []}\n' * 50


def _artifact(team: Team, *, visibility: str = Visibility.WORKSPACE, path: str = "out/tokyo.geojson") -> Artifact:
    run = finished_run(workspace=team.workspace, author=team.member, outputs=[Output(path, MAP)], visibility=visibility)
    return run.artifacts.get()


def _personal(user: Any) -> Workspace:
    return Workspace.objects.get(memberships__user=user, is_personal=True)


def _submit(workspace: Workspace, author: Any, **kwargs: Any) -> Run:
    return creation_submit(workspace=workspace, author=author, brief="the same map, in autumn", **kwargs)


def test_an_artifact_becomes_an_input_with_its_exact_bytes_and_name(team: Team) -> None:
    artifact = _artifact(team)
    run = _submit(team.workspace, team.owner, artifact_ids=[artifact.pk])
    (copied,) = run.creation.inputs.all()
    assert (copied.name, copied.size, copied.content_type) == ("tokyo.geojson", len(MAP), artifact.content_type)
    assert copied.file.read() == MAP
    assert copied.file.name != artifact.file.name  # a copy of its own: deleting the original leaves it


def test_an_artifact_sits_beside_uploads_and_a_taken_name_gets_a_number(team: Team) -> None:
    artifact = _artifact(team)
    upload = SimpleUploadedFile("tokyo.geojson", b"{}")
    run = _submit(team.workspace, team.member, files=[upload], artifact_ids=[artifact.pk])
    inputs = {f.name: f.file.read() for f in run.creation.inputs.all()}
    assert inputs == {"tokyo.geojson": b"{}", "tokyo (2).geojson": MAP}


def test_numbered_names_keep_their_extension_and_fit_the_name_limit() -> None:
    assert numbered_input_name("a.txt", {"a.txt", "a (2).txt"}) == "a (3).txt"
    assert numbered_input_name("README", {"README"}) == "README (2)"
    long = "x" * 196 + ".txt"
    numbered = numbered_input_name(long, {long})
    assert numbered.endswith(" (2).txt")
    assert len(numbered) == 200


def test_a_viewer_takes_a_workspace_artifact_into_their_own_workspace_not_into_the_team(team: Team) -> None:
    artifact = _artifact(team)
    run = _submit(_personal(team.viewer), team.viewer, artifact_ids=[artifact.pk])
    assert run.creation.inputs.get().file.read() == MAP
    with pytest.raises(PermissionDenied):  # seeing it is not being allowed to start runs there
        _submit(team.workspace, team.viewer, artifact_ids=[artifact.pk])


def test_a_member_of_two_workspaces_carries_an_artifact_across(team: Team) -> None:
    artifact = _artifact(team)
    other = workspace_create(name="Side project", owner=team.outsider)
    membership_add(workspace=other, user=team.member, role=Role.MEMBER)
    run = _submit(other, team.member, artifact_ids=[artifact.pk])
    assert run.creation.workspace == other
    assert run.creation.inputs.get().file.read() == MAP


def test_anyone_may_take_a_public_creations_artifact(team: Team) -> None:
    artifact = _artifact(team, visibility=Visibility.PUBLIC)
    run = _submit(_personal(team.outsider), team.outsider, artifact_ids=[artifact.pk])
    assert run.creation.inputs.get().name == "tokyo.geojson"


def _refusal(workspace: Workspace, author: Any, artifact_id: int) -> str:
    with pytest.raises(ValidationError) as error:
        _submit(workspace, author, artifact_ids=[artifact_id])
    (message,) = error.value.message_dict["artifact_ids"]
    return message.replace(str(artifact_id), "<id>")


def test_an_artifact_of_a_workspace_one_is_not_in_is_refused_like_a_missing_one(team: Team) -> None:
    artifact = _artifact(team)
    mine = _personal(team.outsider)
    hidden = _refusal(mine, team.outsider, artifact.pk)
    missing = _refusal(mine, team.outsider, artifact.pk + 1000)
    assert hidden == missing
    assert "that you may see" in hidden
    assert not Creation.objects.filter(workspace=mine).exists()


def test_someone_elses_private_creation_gives_nothing_even_to_the_workspace_owner(team: Team) -> None:
    artifact = _artifact(team, visibility=Visibility.PRIVATE)
    assert _refusal(team.workspace, team.owner, artifact.pk) == _refusal(team.workspace, team.owner, 10**9)
    assert _submit(team.workspace, team.member, artifact_ids=[artifact.pk]).creation.inputs.count() == 1  # the author's


def test_an_artifact_listed_twice_is_refused(team: Team) -> None:
    artifact = _artifact(team)
    with pytest.raises(ValidationError) as error:
        _submit(team.workspace, team.member, artifact_ids=[artifact.pk, artifact.pk])
    assert "listed twice" in str(error.value.message_dict["artifact_ids"])


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ({"RUN_INPUT_MAX_FILES": 1}, "Attach at most 1 files."),
        ({"UPLOAD_MAX_FILE_BYTES": len(MAP) - 1}, "tokyo.geojson: too large"),
        ({"RUN_INPUT_MAX_BYTES": len(MAP)}, "too large together"),
        ({"UPLOAD_ALLOWED_EXTENSIONS": ["txt"]}, "tokyo.geojson: this type of file is not accepted."),
    ],
)
def test_artifacts_count_against_the_upload_rules_and_refused_ones_are_never_fetched(
    team: Team, limits: dict[str, Any], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifact = _artifact(team)
    opened: list[str] = []
    real_open = artifact_inputs.open_stream

    def open_stream(storage: Any, name: str) -> Any:
        opened.append(name)
        return real_open(storage, name)

    monkeypatch.setattr(artifact_inputs, "open_stream", open_stream)
    with override_settings(**limits), pytest.raises(ValidationError) as error:
        _submit(team.workspace, team.member, files=[SimpleUploadedFile("notes.txt", b"ok")], artifact_ids=[artifact.pk])
    assert any(expected in message for message in error.value.message_dict["files"])
    assert opened == []
    assert not Creation.objects.filter(brief="the same map, in autumn").exists()


def test_the_copy_is_read_from_storage_in_chunks(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    artifact = _artifact(team)
    reads: list[int] = []

    class CountingHandle:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def read(self, size: int = -1) -> bytes:
            reads.append(size)
            return bytes(self.handle.read(size))

        def close(self) -> None:
            self.handle.close()

    real_open = artifact_inputs.open_stream
    monkeypatch.setattr(artifact_inputs, "open_stream", lambda storage, name: CountingHandle(real_open(storage, name)))
    monkeypatch.setattr("django.core.files.uploadedfile.UploadedFile.DEFAULT_CHUNK_SIZE", 512)
    run = _submit(team.workspace, team.member, artifact_ids=[artifact.pk])
    assert run.creation.inputs.get().file.read() == MAP
    assert len(reads) > 1
    assert max(reads) <= 512


def test_an_empty_artifact_becomes_an_empty_input(team: Team) -> None:
    run = finished_run(workspace=team.workspace, author=team.member, outputs=[Output("empty.txt", b"")])
    copied = _submit(team.workspace, team.member, artifact_ids=[run.artifacts.get().pk]).creation.inputs.get()
    assert (copied.name, copied.size, copied.file.read()) == ("empty.txt", 0, b"")
