"""A sandbox's whole /testbed as one compressed archive, out and back in.

A creation's next version starts where the previous one stopped: its scripts,
data and caches, not only its deliverables. The archive is made and unpacked by
programs inside the sandbox (sandboxes/programs/testbed_*.sh); the worker only
moves the compressed bytes between the sandbox and a file, counting them, and
never reads what is inside. A tree over the bound keeps output/ alone, and the
report says what was left out.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Protocol

from sandboxes.docker_exec import STDOUT, ExecConnection

CHUNK_BYTES = 1 << 20
STDERR_KEEP_BYTES = 4000


class ByteSource(Protocol):
    """Where a snapshot is read from: a local or a storage file opened for reading."""

    def read(self, size: int = -1, /) -> bytes: ...


class SnapshotTooLarge(Exception):
    """The compressed archive grew past its bound; nothing of it is kept."""


@dataclass(frozen=True)
class SnapshotReport:
    size: int  # compressed bytes written
    whole: bool  # the whole /testbed; False: output/ only
    testbed_bytes: int  # the tree's apparent size when it was archived

    @property
    def left_out(self) -> str:
        """What a person reads about what the snapshot lacks; blank when it is whole."""
        if self.whole:
            return ""
        return (
            f"Only output/ was kept: the whole /testbed was {_megabytes(self.testbed_bytes)}, "
            "over the snapshot limit, so work files, inputs and caches were left out."
        )


@dataclass(frozen=True)
class ArchiveStream:
    written: int
    messages: str  # the program's stderr (its first line names the scope), bounded


def receive_archive(conn: ExecConnection, dest: IO[bytes], *, max_bytes: int, deadline: float) -> ArchiveStream:
    """Copy an exec's stdout to `dest` as it arrives; SnapshotTooLarge past `max_bytes`."""
    written = 0
    messages = b""
    for stream, payload in conn.frames(deadline):
        if stream != STDOUT:
            messages = (messages + payload)[:STDERR_KEEP_BYTES]
            continue
        written += len(payload)
        if written > max_bytes:
            raise SnapshotTooLarge(f"the compressed snapshot is over {max_bytes} bytes")
        dest.write(payload)
    return ArchiveStream(written=written, messages=messages.decode("utf-8", "replace"))


def parse_scope(messages: str) -> tuple[bool, int]:
    """(whole tree?, its apparent size) from the program's first stderr line."""
    first = messages.splitlines()[0] if messages else ""
    fields = dict(part.split("=", 1) for part in first.split() if "=" in part)
    try:
        size = int(fields.get("bytes", "0"))
    except ValueError:
        size = 0
    return fields.get("scope") == "all", max(size, 0)


def file_chunks(source: ByteSource) -> Iterator[bytes]:
    while chunk := source.read(CHUNK_BYTES):
        yield chunk


def transfer_timeout(size: int) -> float:
    """Seconds allowed to move `size` bytes (at least a minute; 5 MB/s beyond)."""
    return max(60.0, size / 5e6)


def deadline_for(size: int) -> float:
    return time.monotonic() + transfer_timeout(size)


def _megabytes(size: int) -> str:
    if size >= 1 << 30:
        return f"{size / (1 << 30):.1f} GB"
    return f"{size / (1 << 20):.1f} MB"
