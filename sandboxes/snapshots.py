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
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import IO

from sandboxes import files
from sandboxes.docker_exec import STDOUT, ExecConnection
from sandboxes.programs import program_text
from sandboxes.runtime import ByteSource, SnapshotReport

CHUNK_BYTES = 1 << 20
STDERR_KEEP_BYTES = 4000
# A busy machine can be slow to report a finished exec: a snapshot is worth the wait.
EXIT_WAIT_SECONDS = 10.0

# Opens an exec in the sandbox (argv, with stdin or not) for the length of a `with` block.
OpenExec = Callable[[list[str], bool], AbstractContextManager[ExecConnection]]


class SnapshotFailed(RuntimeError):
    """The program in the sandbox that archives or unpacks /testbed failed; the message says how."""


class SnapshotTooLarge(Exception):
    """The compressed archive grew past its bound; nothing of it is kept."""


@dataclass(frozen=True)
class ArchiveStream:
    written: int
    messages: str  # the program's stderr (its first line names the scope), bounded


def save_testbed(open_exec: OpenExec, dest: IO[bytes], *, max_bytes: int) -> SnapshotReport | None:
    """/testbed, compressed, into `dest` (at most `max_bytes`): the whole tree when it fits,
    else output/ alone; None when even output/ does not fit."""
    script = program_text("testbed_snapshot.sh")
    for scope in ("auto", "output"):
        dest.seek(0)
        dest.truncate()
        with open_exec(["sh", "-c", script, "testbed-snapshot", str(max_bytes), scope], False) as conn:
            try:
                received = receive_archive(conn, dest, max_bytes=max_bytes, deadline=deadline_for(max_bytes))
            except SnapshotTooLarge:
                continue
        code = conn.exit_code(wait_seconds=EXIT_WAIT_SECONDS)
        if code != 0:
            raise SnapshotFailed(f"archiving /testbed failed (exit {code}): {received.messages.strip()[:300]}")
        whole, testbed_bytes = parse_scope(received.messages)
        if whole or scope == "output":
            return SnapshotReport(size=received.written, whole=whole, testbed_bytes=testbed_bytes)
    return None


def restore_testbed(open_exec: OpenExec, source: ByteSource, *, size: int) -> None:
    """Unpack what save_testbed wrote (`size` bytes) into /testbed."""
    with open_exec(["bash", "-c", program_text("testbed_restore.sh"), "testbed-restore"], True) as conn:
        code, messages = files.send_stream(
            conn, file_chunks(source), timeout=transfer_timeout(size), exit_wait=EXIT_WAIT_SECONDS
        )
    if code != 0:
        raise SnapshotFailed(f"restoring the previous version's files failed (exit {code}): {messages.strip()}")


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
