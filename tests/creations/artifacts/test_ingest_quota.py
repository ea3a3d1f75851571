"""Storing a run's files: within what its workspace's storage quota has left, each with its sha256."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from creations.artifacts.ingest import ingest_outputs
from creations.models import Artifact, RunStatus
from sandboxes.runtime import CopiedFile
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def copied(tmp_path: Path, name: str, size: int) -> CopiedFile:
    path = tmp_path / name
    path.write_bytes(b"x" * size)
    return CopiedFile(path=name, local_path=path, size=size)


def test_files_past_the_allowance_are_not_stored_and_say_why(team: Team, tmp_path: Path) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    files = [
        copied(tmp_path, "a.txt", 600),
        copied(tmp_path, "b-video.bin", 5000),
        copied(tmp_path, "c.txt", 400),
        copied(tmp_path, "d.txt", 1),
    ]

    ingested = ingest_outputs(run=run, files=files, storage_allowance=1000)

    # In path order, while they fit: a smaller file after a refused one may still fit.
    assert [a.path for a in ingested.artifacts] == ["a.txt", "c.txt"]
    assert set(Artifact.objects.filter(run=run).values_list("path", flat=True)) == {"a.txt", "c.txt"}
    advice = " Deleting creations the workspace no longer needs frees space."
    assert ingested.rejected == [
        (
            "b-video.bin",
            "Not stored: this 4.9 KB file would pass the workspace's storage quota (only 400 bytes is left)." + advice,
        ),
        ("d.txt", "Not stored: this 1 byte file would pass the workspace's storage quota (nothing is left)." + advice),
    ]


def test_without_an_allowance_everything_is_stored(team: Team, tmp_path: Path) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    ingested = ingest_outputs(run=run, files=[copied(tmp_path, "big.bin", 10_000)])
    assert [a.path for a in ingested.artifacts] == ["big.bin"]
    assert ingested.rejected == []


def test_each_stored_file_keeps_the_sha256_of_its_bytes(team: Team, tmp_path: Path) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    [artifact] = ingest_outputs(run=run, files=[copied(tmp_path, "notes.txt", 300)]).artifacts
    assert artifact.sha256 == hashlib.sha256(b"x" * 300).hexdigest()
    assert artifact.file.read() == b"x" * 300  # hashing left the whole file to be stored
