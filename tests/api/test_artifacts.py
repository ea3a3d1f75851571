"""What a run made, through the API: listed with sizes and hashes, each file
downloaded whole or by range, all of them as a zip. From the platform's origin an
artifact is always an attachment, never a page that could run there."""

from __future__ import annotations

import hashlib
import io
import zipfile
from typing import Any

import pytest

from tests.support.api import api_as
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]

PAGE = b"<html><script>fetch('/api/v1/workspaces')</script></html>"
DATA = bytes(range(256)) * 40


def body(response: Any) -> bytes:
    return b"".join(response)


@pytest.fixture
def made(team: Team) -> dict[str, Any]:
    run = finished_run(
        workspace=team.workspace,
        author=team.owner,
        outputs=[Output("index.html", PAGE), Output("data/table.bin", DATA)],
    )
    return {"run": run, "artifacts": {a.path: a for a in run.artifacts.all()}}


def test_the_list_gives_each_file_with_its_size_hash_and_address(team: Team, made: dict[str, Any]) -> None:
    listed = api_as(team.viewer).get(f"/api/v1/runs/{made['run'].pk}/artifacts").json()
    assert [(a["path"], a["name"], a["size"]) for a in listed] == [
        ("data/table.bin", "table.bin", len(DATA)),
        ("index.html", "index.html", len(PAGE)),
    ]
    assert listed[0]["sha256"] == hashlib.sha256(DATA).hexdigest()
    assert listed[0]["download_url"].endswith(f"/api/v1/artifacts/{listed[0]['id']}/download")
    assert listed[0]["preview_url"] is None


def test_a_download_is_always_an_attachment_that_cannot_run_here(team: Team, made: dict[str, Any]) -> None:
    page = made["artifacts"]["index.html"]
    response = api_as(team.member).get(f"/api/v1/artifacts/{page.pk}/download")
    assert response.status_code == 200
    assert body(response) == PAGE
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"].startswith("sandbox")


def test_a_range_gives_just_that_part(team: Team, made: dict[str, Any]) -> None:
    table = made["artifacts"]["data/table.bin"]
    client = api_as(team.member)
    part = client.get(f"/api/v1/artifacts/{table.pk}/download", headers={"Range": "bytes=100-299"})
    assert part.status_code == 206
    assert part["Content-Range"] == f"bytes 100-299/{len(DATA)}"
    assert body(part) == DATA[100:300]
    outside = client.get(f"/api/v1/artifacts/{table.pk}/download", headers={"Range": f"bytes={len(DATA)}-"})
    assert outside.status_code == 416
    assert outside["Content-Range"] == f"bytes */{len(DATA)}"


def test_the_zip_holds_every_file(team: Team, made: dict[str, Any]) -> None:
    response = api_as(team.member).get(f"/api/v1/runs/{made['run'].pk}/artifacts/zip")
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(body(response)))
    assert {name: archive.read(name) for name in archive.namelist()} == {"index.html": PAGE, "data/table.bin": DATA}


def test_no_preview_and_no_access_are_both_not_found(team: Team, made: dict[str, Any]) -> None:
    table = made["artifacts"]["data/table.bin"]
    missing = api_as(team.member).get(f"/api/v1/artifacts/{table.pk}/preview")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "This artifact has no preview."
    assert api_as(team.outsider).get(f"/api/v1/artifacts/{table.pk}/download").status_code == 404
    assert api_as(team.outsider).get(f"/api/v1/runs/{made['run'].pk}/artifacts").status_code == 404
