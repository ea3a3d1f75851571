"""Every file a person meets lives in the S3 store when STORAGE_BACKEND=s3 (a real
S3-compatible server, SeaweedFS, listed straight from the bucket): the inputs given with a
brief (and copied by a fork), long command output kept whole, documents shown on the page,
the run's zip; deleting a creation deletes its objects."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from creations.events.payload_cap import cap_payload
from creations.events.store import store_events
from creations.models import Artifact, InputFile, Run, RunStatus
from creations.runs.services import creation_delete, creation_fork, creation_submit
from devstack.s3 import S3Server
from tests.support.artifacts import Output, finished_run
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]

STOPS = b"name,lat,lon\nTsukiji,35.66,139.77\n"


def body(response: Any) -> bytes:
    return b"".join(response) if response.streaming else response.content


def test_inputs_given_with_a_brief_are_in_the_bucket_and_a_fork_copies_them(team: Team, s3_storage: S3Server) -> None:
    run = creation_submit(
        workspace=team.workspace,
        author=team.member,
        brief="a map of these stops",
        files=[SimpleUploadedFile("stops.csv", STOPS, content_type="text/csv")],
    )
    original = run.creation.inputs.get()
    assert s3_storage.names("inputs/") == {str(original.file.name)}
    assert s3_storage.object_bytes(str(original.file.name)) == STOPS

    fork = creation_fork(creation=run.creation, user=team.member, brief="the same, in blue")
    copied = fork.creation.inputs.get()
    assert copied.file.name != original.file.name
    assert s3_storage.names("inputs/") == {str(original.file.name), str(copied.file.name)}
    assert s3_storage.object_bytes(str(copied.file.name)) == STOPS


def test_long_command_output_is_kept_whole_in_the_bucket_and_shown_whole(
    team: Team, s3_storage: S3Server, settings: Any
) -> None:
    settings.RUN_EVENT_PAYLOAD_MAX_BYTES = 16 * 1024
    run = make_run(team, status=RunStatus.RUNNING)
    output = "".join(f"row {i}\n" for i in range(20_000))
    result = {"step": 1, "call_id": "c1", "name": "execute_bash", "output": output, "is_error": False,
              "exit_code": 0, "duration": 0.5}  # fmt: skip
    (event,) = store_events(run.pk, [("tool_result", result)]) or []
    kept = event.payload["overflow"]["output"]["path"]
    assert s3_storage.names(f"run-events/{run.pk}/") == {kept}

    client = Client()
    client.force_login(team.viewer)
    response = client.get(reverse("run_event_overflow", args=[run.pk, event.seq, "output"]))
    assert response.status_code == 200
    assert body(response).decode() == output


def test_a_document_on_the_page_is_read_from_the_bucket(team: Team, s3_storage: S3Server) -> None:
    run = finished_run(
        workspace=team.workspace, author=team.owner, outputs=[Output("notes.txt", b"Tsukiji at dawn, Ginza at night\n")]
    )
    assert s3_storage.names(f"artifacts/{run.pk}/") == {str(run.artifacts.get().file.name)}
    client = Client()
    client.force_login(team.member)
    page = client.get(reverse("creation_detail", args=[run.creation_id]))
    assert "Tsukiji at dawn, Ginza at night" in page.content.decode()


def test_the_runs_zip_is_made_from_the_bucket(team: Team, s3_storage: S3Server) -> None:
    outputs = [Output("poster.png", png_bytes()), Output("docs/notes.md", b"# Notes\n")]
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=outputs)
    client = Client()
    client.force_login(team.member)
    response = client.get(reverse("run_download_zip", args=[run.pk]))
    archive = zipfile.ZipFile(io.BytesIO(body(response)))
    assert {name: archive.read(name) for name in archive.namelist()} == {o.path: o.data for o in outputs}


def stored_for(s3: S3Server, run: Run) -> set[str]:
    """The run's objects (and its creation's inputs) as the bucket lists them."""
    names = {
        name
        for prefix in ("artifacts", "previews", "rendered", "run-events")
        for name in s3.names(f"{prefix}/{run.pk}/")
    }
    return names | s3.names(f"inputs/{run.creation.workspace_id}/{run.creation_id}/")


def test_deleting_a_creation_deletes_its_objects_from_the_bucket(
    team: Team, s3_storage: S3Server, django_capture_on_commit_callbacks: Any
) -> None:
    run = finished_run(
        workspace=team.workspace,
        author=team.member,
        outputs=[Output("poster.png", png_bytes()), Output("notes.md", b"# Notes\n")],
    )
    poster: Artifact = run.artifacts.get(path="poster.png")
    poster.preview.save("preview.png", ContentFile(png_bytes(40, 40)), save=True)
    notes: Artifact = run.artifacts.get(path="notes.md")
    notes.rendered.save("document.html", ContentFile(b"<h1>Notes</h1>"), save=True)
    given = InputFile(creation=run.creation, name="stops.csv", size=len(STOPS))
    given.file.save("stops.csv", ContentFile(STOPS), save=True)
    cap_payload(run.pk, {"output": "x" * 20_000}, limit=4 * 1024)  # a long command output, kept as a file
    kept = finished_run(workspace=team.workspace, author=team.owner, outputs=[Output("keep.md", b"# Keep\n")])

    before = stored_for(s3_storage, run)
    assert sorted(name.split("/")[0] for name in before) == [
        "artifacts", "artifacts", "inputs", "previews", "rendered", "run-events",
    ]  # fmt: skip
    others = stored_for(s3_storage, kept)
    assert len(others) == 1

    with django_capture_on_commit_callbacks(execute=True):
        creation_delete(creation=run.creation, user=team.member)

    assert stored_for(s3_storage, run) == set()
    assert stored_for(s3_storage, kept) == others
