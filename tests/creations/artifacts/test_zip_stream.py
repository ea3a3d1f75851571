"""The run's zip is produced as a stream: a chunk at a time, never the whole archive or a whole file."""

import io
import os
import zipfile

import pytest

from creations.artifacts.zip_stream import CHUNK_BYTES, zip_artifacts
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes

pytestmark = pytest.mark.django_db


def test_a_large_file_is_zipped_chunk_by_chunk_and_reads_back_whole(team: Team) -> None:
    big = os.urandom(10 * CHUNK_BYTES + 123)
    outputs = [Output("data/big.bin", big), Output("notes.md", b"# Notes\n" * 1000), Output("p.png", png_bytes())]
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=outputs)

    chunks = list(zip_artifacts(run.artifacts.all()))

    assert len(chunks) > 10
    assert max(len(chunk) for chunk in chunks) <= 2 * CHUNK_BYTES  # never a whole file at once
    archive = zipfile.ZipFile(io.BytesIO(b"".join(chunks)))
    assert archive.testzip() is None
    assert archive.read("data/big.bin") == big
    assert archive.read("notes.md") == b"# Notes\n" * 1000
    assert archive.getinfo("data/big.bin").compress_type == zipfile.ZIP_STORED  # media is not recompressed
    assert archive.getinfo("notes.md").compress_type == zipfile.ZIP_DEFLATED
