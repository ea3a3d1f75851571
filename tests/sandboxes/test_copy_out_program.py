"""The copy-out program on this machine's Python and GNU tar, as the sandbox runs it (its argv,
with this interpreter for the image's): what it streams for an empty output/ and for files."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

from sandboxes.files import SUMMARY_PREFIX, copy_out_argv


def _copy_out(src: Path) -> tuple[bytes, dict[str, object]]:
    argv = copy_out_argv(str(src), max_files=10, max_bytes=1024 * 1024)
    assert argv[:3] == ["python3", "-I", "-S"]  # standard library only: no site-packages scanned
    done = subprocess.run([sys.executable, *argv[1:]], capture_output=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    summary_line = done.stderr.splitlines()[0]
    assert summary_line.startswith(SUMMARY_PREFIX)
    return done.stdout, json.loads(summary_line[len(SUMMARY_PREFIX) :])


def test_an_empty_output_streams_what_gnu_tar_writes_for_no_files(tmp_path: Path) -> None:
    stream, summary = _copy_out(tmp_path)
    gnu_tar = subprocess.run(
        ["tar", "-c", "--format=gnu", "-f", "-", "--null", "--no-recursion", "-T", "/dev/null"],
        capture_output=True,
        check=True,
    ).stdout
    assert stream == gnu_tar
    with tarfile.open(fileobj=io.BytesIO(stream), mode="r|") as archive:
        assert list(archive) == []
    assert summary == {"skipped": [], "skipped_count": 0, "complete": True, "capped": False}


def test_files_stream_as_a_tar_with_the_top_of_output_first(tmp_path: Path) -> None:
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "a.txt").write_text("deeper")
    (tmp_path / "poster.svg").write_text("<svg/>")
    stream, summary = _copy_out(tmp_path)
    with tarfile.open(fileobj=io.BytesIO(stream), mode="r|") as archive:
        contents = {member.name: archive.extractfile(member).read() for member in archive}  # type: ignore[union-attr]
    assert list(contents) == ["poster.svg", "deep/a.txt"]
    assert contents == {"poster.svg": b"<svg/>", "deep/a.txt": b"deeper"}
    assert summary["skipped_count"] == 0
