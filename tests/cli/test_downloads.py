"""Downloading a run's files: verified by sha256, resumed after a drop, kept inside the folder."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import httpx
import pytest

from atelier_cli.downloads import ArtifactDownloader, safe_target
from atelier_cli.errors import CliError
from tests.cli.fake_api import DroppedStream, FakeApi

POSTER = b"P" * 100_000
NOTES = b"# Notes\n"


def artifact(artifact_id: int, path: str, data: bytes, *, sha256: str | None = None) -> dict:
    digest = hashlib.sha256(data).hexdigest() if sha256 is None else sha256
    return {"id": artifact_id, "path": path, "name": path.rsplit("/", 1)[-1], "size": len(data), "sha256": digest}


def downloader(api: FakeApi, folder: Path) -> tuple[ArtifactDownloader, io.StringIO]:
    out = io.StringIO()
    return ArtifactDownloader(api.client(), folder, out=out, progress_stream=io.StringIO(), sleep=lambda s: None), out


def test_it_downloads_every_file_under_its_path_and_verifies_it(tmp_path: Path) -> None:
    api = FakeApi(
        {
            ("GET", "/runs/3/artifacts"): lambda r: httpx.Response(
                200, json=[artifact(1, "poster.png", POSTER), artifact(2, "docs/notes.md", NOTES)]
            ),
            ("GET", "/artifacts/1/download"): lambda r: httpx.Response(200, content=POSTER),
            ("GET", "/artifacts/2/download"): lambda r: httpx.Response(200, content=NOTES),
        }
    )
    loader, out = downloader(api, tmp_path / "out")
    saved = loader.download_run(3)
    assert (tmp_path / "out/poster.png").read_bytes() == POSTER
    assert (tmp_path / "out/docs/notes.md").read_bytes() == NOTES
    assert saved == [tmp_path / "out/poster.png", tmp_path / "out/docs/notes.md"]
    assert "[1/2] poster.png  ✓ 100.0 KB, sha256 verified" in out.getvalue()
    assert not list((tmp_path / "out").rglob("*.part"))


def test_a_file_that_does_not_match_its_sha256_is_not_kept(tmp_path: Path) -> None:
    api = FakeApi(
        {
            ("GET", "/runs/3/artifacts"): lambda r: httpx.Response(
                200, json=[artifact(1, "poster.png", POSTER, sha256="0" * 64), artifact(2, "notes.md", NOTES)]
            ),
            ("GET", "/artifacts/1/download"): lambda r: httpx.Response(200, content=POSTER),
            ("GET", "/artifacts/2/download"): lambda r: httpx.Response(200, content=NOTES),
        }
    )
    loader, _ = downloader(api, tmp_path)
    with pytest.raises(CliError, match=r"poster.png: its sha256 is \w+, not 0{64}"):
        loader.download_run(3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]


def test_a_dropped_download_resumes_where_it_stopped(tmp_path: Path) -> None:
    answers = iter(
        [
            httpx.Response(200, stream=DroppedStream(POSTER[:30_000])),
            httpx.Response(206, content=POSTER[30_000:]),
        ]
    )
    api = FakeApi(
        {
            ("GET", "/runs/3/artifacts"): lambda r: httpx.Response(200, json=[artifact(1, "poster.png", POSTER)]),
            ("GET", "/artifacts/1/download"): lambda r: next(answers),
        }
    )
    loader, _ = downloader(api, tmp_path)
    loader.download_run(3)
    first, resumed = api.sent("GET", "/artifacts/1/download")
    assert "Range" not in first.headers
    assert resumed.headers["Range"] == "bytes=30000-"
    assert (tmp_path / "poster.png").read_bytes() == POSTER


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd", "a/../../b", "", "a\\..\\b"])
def test_paths_that_would_leave_the_folder_are_refused(tmp_path: Path, path: str) -> None:
    with pytest.raises(CliError, match="would land outside"):
        safe_target(tmp_path, path)


def test_a_link_already_in_the_folder_does_not_lead_out_of_it(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out/link").symlink_to(tmp_path)
    with pytest.raises(CliError, match="would land outside"):
        safe_target(tmp_path / "out", "link/x.txt")
    assert safe_target(tmp_path / "out", "sub/x.txt") == tmp_path / "out/sub/x.txt"
