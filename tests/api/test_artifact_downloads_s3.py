"""The API's downloads with artifacts in S3 (a real S3-compatible server, SeaweedFS): media is
redirected to a short-lived URL of the store after the same access check, as an attachment;
pages and text still come from the API; the `atelier` command follows the redirect, verifies
each file's sha256 and never hands its token to the store."""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.core.files.base import ContentFile
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections

from atelier_cli.api_client import ApiClient as CliApiClient
from atelier_cli.credentials import Credentials
from atelier_cli.downloads import ArtifactDownloader
from devstack.s3 import S3Server
from tests.support.api import api_as, token_for
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import mp4_bytes, png_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]

PAGE = b"<html><script>fetch('/api/v1/workspaces')</script></html>"
VIDEO = mp4_bytes(seconds=2)


def body(response: Any) -> bytes:
    return b"".join(response) if response.streaming else response.content


@pytest.fixture
def made(team: Team, s3_storage: S3Server) -> dict[str, Any]:
    run = finished_run(
        workspace=team.workspace,
        author=team.owner,
        outputs=[Output("index.html", PAGE), Output("media/clip.mp4", VIDEO)],
    )
    artifacts = {a.path: a for a in run.artifacts.all()}
    clip = artifacts["media/clip.mp4"]
    clip.preview.save("preview.png", ContentFile(png_bytes()), save=True)
    return {"run": run, "artifacts": artifacts}


def test_media_is_redirected_to_the_store_as_an_attachment(team: Team, made: dict[str, Any]) -> None:
    clip = made["artifacts"]["media/clip.mp4"]
    response = api_as(team.viewer).get(f"/api/v1/artifacts/{clip.pk}/download")
    assert response.status_code == 302
    assert response["Cache-Control"] == "no-store"
    from_store = httpx.get(response["Location"])
    assert hashlib.sha256(from_store.content).hexdigest() == clip.sha256
    assert from_store.headers["Content-Type"] == "video/mp4"
    assert from_store.headers["Content-Disposition"].startswith('attachment; filename="clip.mp4"')
    part = httpx.get(response["Location"], headers={"Range": "bytes=10-109"})
    assert (part.status_code, part.content) == (206, VIDEO[10:110])

    preview = api_as(team.viewer).get(f"/api/v1/artifacts/{clip.pk}/preview")
    assert preview.status_code == 302
    assert httpx.get(preview["Location"]).content == png_bytes()


def test_a_page_is_still_streamed_by_the_api_as_an_attachment(team: Team, made: dict[str, Any]) -> None:
    page = made["artifacts"]["index.html"]
    response = api_as(team.member).get(f"/api/v1/artifacts/{page.pk}/download")
    assert response.status_code == 200
    assert body(response) == PAGE
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["Content-Security-Policy"].startswith("sandbox")


def test_no_access_means_no_redirect(team: Team, made: dict[str, Any]) -> None:
    clip = made["artifacts"]["media/clip.mp4"]
    for path in ("download", "preview"):
        refused = api_as(team.outsider).get(f"/api/v1/artifacts/{clip.pk}/{path}")
        assert refused.status_code == 404
        assert "Location" not in refused


def test_the_zip_export_reads_each_file_from_the_store_once(
    team: Team, made: dict[str, Any], s3_storage: S3Server
) -> None:
    s3_storage.proxy.reset()
    response = api_as(team.member).get(f"/api/v1/runs/{made['run'].pk}/artifacts/zip")
    archive = zipfile.ZipFile(io.BytesIO(body(response)))
    assert {name: archive.read(name) for name in archive.namelist()} == {"index.html": PAGE, "media/clip.mp4": VIDEO}
    assert s3_storage.proxy.received < len(PAGE) + len(VIDEO) + 64 * 1024


class _PlatformAndStore(httpx.BaseTransport):
    """The platform answered in this process (its WSGI application, in the test's transaction);
    the store over real HTTP."""

    def __init__(self) -> None:
        self.platform = httpx.WSGITransport(app=get_wsgi_application())
        self.network = httpx.HTTPTransport()
        self.to_store: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "testserver":
            return self.platform.handle_request(request)
        self.to_store.append(request)
        return self.network.handle_request(request)


@pytest.fixture
def in_process_platform() -> Iterator[_PlatformAndStore]:
    # As Django's test client does: a request ending must not close the test's connection.
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield _PlatformAndStore()
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


def test_the_atelier_command_downloads_redirected_files_and_verifies_them(
    team: Team, made: dict[str, Any], tmp_path: Path, in_process_platform: _PlatformAndStore
) -> None:
    transport = in_process_platform
    token = token_for(team.member)
    client = CliApiClient(Credentials(url="http://testserver", token=token), transport=transport)
    out = io.StringIO()
    loader = ArtifactDownloader(client, tmp_path / "made", out=out, progress_stream=io.StringIO())
    loader.download_run(made["run"].pk)

    assert (tmp_path / "made/media/clip.mp4").read_bytes() == VIDEO
    assert (tmp_path / "made/index.html").read_bytes() == PAGE
    assert out.getvalue().count("sha256 verified") == 2
    assert [request.url.path.rsplit("/", 1)[-1] for request in transport.to_store] == [
        made["artifacts"]["media/clip.mp4"].file.name.rsplit("/", 1)[-1]
    ]
    assert all("Authorization" not in request.headers for request in transport.to_store)
