"""An artifact reused as an input on S3 (a real S3-compatible server, SeaweedFS): the copy
is read from the store as one streamed GET, never first downloaded whole by the storage's
own file object, and lands in the bucket byte for byte."""

from __future__ import annotations

import os
from typing import Any

import pytest
from storages.backends.s3 import S3File

from creations.runs.services import creation_submit
from devstack.s3 import S3Server
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db

# Several of the storage's upload chunks and of our read chunks, so the copy cannot be one read.
DATA = os.urandom(3 * 1024 * 1024 + 17)


def _no_whole_download(self: Any) -> Any:
    raise AssertionError("S3File downloads a whole object to a temporary file; the copy must stream it")


def test_an_artifact_in_the_bucket_is_copied_to_an_input_as_a_stream(
    team: Team, s3_storage: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = finished_run(workspace=team.workspace, author=team.member, outputs=[Output("noise.bin.txt", DATA)])
    artifact = run.artifacts.get()
    monkeypatch.setattr(S3File, "file", property(_no_whole_download))
    s3_storage.proxy.reset()

    copied = creation_submit(
        workspace=team.workspace, author=team.member, brief="more of this noise", artifact_ids=[artifact.pk]
    ).creation.inputs.get()

    assert (copied.name, copied.size) == ("noise.bin.txt", len(DATA))
    assert str(copied.file.name) in s3_storage.names("inputs/")
    assert s3_storage.proxy.received < len(DATA) * 1.2  # read once, not twice
    assert s3_storage.object_bytes(str(copied.file.name)) == DATA
