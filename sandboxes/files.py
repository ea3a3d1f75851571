"""Files in and out of a sandbox through exec'd `tar` streams.

In: a tar built here is piped to `tar -x` in the sandbox (never Docker's
put_archive, which gVisor mishandles in running containers).
Out: a program in the sandbox (sandboxes/programs/copy_out_select.py) walks
the tree breadth-first, chooses the files that fit the caps (the top of the
tree first), says on stderr what it left out, and has `tar -c` stream the
chosen files to the worker. The worker trusts none of it: it reads the stream
with `tarfile` in stream mode and writes only regular files under the target
directory: no symlinks or hardlinks (a link could point at a host path), no
devices or FIFOs, no absolute or `..` paths, byte and file-count caps of its
own. The worker never holds more than one tar block in memory. (docker cp and
get_archive cannot read the tmpfs /testbed, and would follow no policy.)
"""

from __future__ import annotations

import io
import json
import os
import posixpath
import tarfile
import time
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from sandboxes.docker_exec import STDOUT, ExecClosed, ExecConnection
from sandboxes.programs import program_text
from sandboxes.runtime import CopiedFile, CopyOutReport

MAX_NAME_BYTES = 255  # one path component, as on ext4
MAX_PATH_BYTES = 1024


class CopyInError(ValueError):
    """The files to copy in are not acceptable; the message says why."""


def name_problem(path: str) -> str | None:
    """Why a relative path cannot be stored, or None when it is fine."""
    if not path or path.startswith("/"):
        return "absolute or empty path"
    parts = PurePosixPath(path).parts
    if any(part in ("..", ".") for part in path.split("/")):
        return "path contains '.' or '..'"
    if any(unicodedata.category(char) == "Cc" for char in path):
        return "name contains a control character (such as a newline)"
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in parts):
        return f"a name is longer than {MAX_NAME_BYTES} bytes"
    if len(path.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
        return f"path is longer than {MAX_PATH_BYTES} bytes"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "name is not valid UTF-8"
    return None


def build_tar(files: Mapping[str, bytes], max_bytes: int) -> bytes:
    total = sum(len(content) for content in files.values())
    if total > max_bytes:
        raise CopyInError(f"the files are {total} bytes, more than the limit of {max_bytes}")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in files.items():
            relative = name[2:] if name.startswith("./") else name
            problem = name_problem(relative)
            if problem:
                raise CopyInError(f"cannot copy {name!r} in: {problem}")
            info = tarfile.TarInfo(relative)
            info.size = len(content)
            info.mode = 0o644
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def write_files(conn: ExecConnection, archive: bytes, timeout: float) -> tuple[int | None, str]:
    """Stream `archive` to an exec'd `tar -x` and wait for it; (exit code, messages)."""
    view = memoryview(archive)
    return send_stream(conn, (view[start : start + (1 << 20)] for start in range(0, len(view), 1 << 20)), timeout)


def send_stream(
    conn: ExecConnection, chunks: Iterable[bytes | memoryview], timeout: float, *, exit_wait: float = 0.5
) -> tuple[int | None, str]:
    """Send `chunks` to an exec's stdin, close it and wait for the process; (exit code, last messages)."""
    try:
        for chunk in chunks:
            conn.send(chunk)
        conn.close_stdin()
        messages = b""
        for _, payload in conn.frames(time.monotonic() + timeout):
            messages = (messages + payload)[-2000:]  # only the last words are reported: keep no more
    finally:
        conn.close()
    return conn.exit_code(wait_seconds=exit_wait), messages.decode("utf-8", "replace")


class _ExecStdoutReader(io.RawIOBase):
    """A file-like view of an exec's stdout (stderr kept apart, bounded)."""

    def __init__(self, conn: ExecConnection, deadline: float) -> None:
        self._conn = conn
        self._deadline = deadline
        self._buffer = b""
        self.stderr = b""  # the last words, for an error message
        self.stderr_head = b""  # the first ones: the selection's summary line
        self.eof = False

    def readable(self) -> bool:
        return True

    def wait_for_summary(self, deadline: float) -> None:
        """Read on (dropping stdout) until stderr's first line is complete, the output ends or `deadline`."""
        self._deadline = min(self._deadline, deadline)
        try:
            while b"\n" not in self.stderr_head and not self.eof and len(self.stderr_head) < SUMMARY_MAX_BYTES:
                self._buffer = b""
                self.readinto(bytearray(1 << 16))
        except TimeoutError:
            pass

    def readinto(self, target: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._buffer and not self.eof:
            try:
                frame = self._conn.read_frame(self._deadline)
            except ExecClosed:
                self.eof = True
                break
            if frame is None:
                raise TimeoutError("copying files out took too long")
            stream, payload = frame
            if stream == STDOUT:
                self._buffer = payload
            else:
                self.stderr = (self.stderr + payload)[-4000:]
                if len(self.stderr_head) < SUMMARY_MAX_BYTES:
                    self.stderr_head += payload[: SUMMARY_MAX_BYTES - len(self.stderr_head)]
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size


def _member_problem(member: tarfile.TarInfo) -> str | None:
    if member.issym():
        return "symbolic link (not followed)"
    if member.islnk():
        return "hard link (not followed)"
    if member.isdev() or member.isfifo():
        return "device or FIFO"
    if not (member.isfile() or member.isdir()):
        return "not a regular file"
    return None


MAX_REJECTED_LISTED = 200  # rejected names kept for the report; the rest are only counted
ENTRIES_PER_FILE = 4  # directories, links and rejected entries allowed per file, before the copy stops
# Entries the selection walks before it stops counting what it leaves out (a tree of millions of
# files would take minutes to walk under gVisor; past this, the report says "at least").
COPY_OUT_WALK_LIMIT = 200_000
SUMMARY_PREFIX = b"atelier-copy-out "
SUMMARY_MAX_BYTES = 512 * 1024  # the summary names at most MAX_REJECTED_LISTED entries of 300 characters
SUMMARY_WAIT_SECONDS = 5.0  # for a summary line the stream overtook (Docker forwards stdout and stderr apart)
_SELECT_PROGRAM = program_text("copy_out_select.py")


def copy_out_argv(src: str, *, max_files: int, max_bytes: int) -> list[str]:
    """The exec that streams the tree at `src` as a tar, its top first, within the caps (see the program)."""
    limits = (max_files, max_bytes, max_files * ENTRIES_PER_FILE, COPY_OUT_WALK_LIMIT, MAX_REJECTED_LISTED)
    # -S: the program needs the standard library only, and starts as the editor's helper does, with
    # nothing of site-packages on its path (no CPU saved that bench/run_lifecycle.py could measure).
    return ["python3", "-I", "-S", "-c", _SELECT_PROGRAM, src, *(str(limit) for limit in limits)]


class _Rejections:
    """The entries not copied: the first MAX_REJECTED_LISTED named, all counted."""

    def __init__(self, report: CopyOutReport) -> None:
        self.listed = report.rejected
        self.count = 0

    def add(self, name: str, reason: str) -> None:
        self.count += 1
        if len(self.listed) < MAX_REJECTED_LISTED:
            self.listed.append((name[:300], reason))


def read_tar_stream(
    conn: ExecConnection, dest_dir: Path, *, max_bytes: int, max_files: int, timeout: float
) -> CopyOutReport:
    """Unpack regular files from the exec's tar stream into `dest_dir`, safely.

    The worker's memory stays bounded whatever the tree holds: tar's member list
    is emptied as it goes, every entry (directories and links too) counts toward
    a cap, and only the first rejected names are kept."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    root = dest_dir.resolve()
    reader = _ExecStdoutReader(conn, time.monotonic() + timeout)
    report = CopyOutReport()
    rejections = _Rejections(report)
    reject = rejections.add
    truncated = False
    total_bytes = 0
    try:
        stream = io.BufferedReader(reader, buffer_size=1 << 16)
        with tarfile.open(fileobj=stream, mode="r|", encoding="utf-8", errors="surrogateescape") as tar:
            entries = 0
            for member in tar:
                # A stream is read once: keep no index of what went by (an attribute typeshed omits).
                tar.members.clear()  # type: ignore[attr-defined]
                entries += 1
                if entries > max_files * ENTRIES_PER_FILE:
                    reject(member.name, f"more than {max_files * ENTRIES_PER_FILE} entries")
                    truncated = True
                    break
                name = posixpath.normpath(member.name.removeprefix("./")) if member.name not in (".", "./") else ""
                if not name or name == ".":
                    continue
                problem = name_problem(name) or _member_problem(member)
                if problem:
                    reject(name, problem)
                    continue
                target = (root / name).resolve()
                if root not in target.parents:
                    reject(name, "outside the output directory")
                    continue
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if len(report.files) >= max_files:
                    reject(name, f"more than {max_files} files")
                    truncated = True
                    break
                if total_bytes + member.size > max_bytes:
                    reject(name, f"the output would exceed {max_bytes} bytes")
                    truncated = True
                    break
                source = tar.extractfile(member)
                if source is None:
                    reject(name, "unreadable")
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
                with os.fdopen(os.open(target, flags, 0o644), "wb") as out:
                    while chunk := source.read(1 << 16):
                        out.write(chunk)
                total_bytes += member.size
                report.files.append(CopiedFile(path=name, local_path=target, size=member.size))
        if not reader.eof and b"\n" not in reader.stderr_head:
            reader.wait_for_summary(time.monotonic() + SUMMARY_WAIT_SECONDS)
    except tarfile.ReadError as exc:
        if report.files or reader.stderr.strip() == b"":
            raise
        raise FileNotFoundError(reader.stderr.decode("utf-8", "replace").strip()) from exc
    finally:
        conn.close()
    return _with_selection(report, rejections, truncated=truncated, summary=_summary(reader.stderr_head))


def _summary(stderr_head: bytes) -> dict[str, object]:
    """The selection's line about what it left out; empty when there is none (or it does not parse)."""
    if not stderr_head.startswith(SUMMARY_PREFIX) or b"\n" not in stderr_head:
        return {}
    line = stderr_head[len(SUMMARY_PREFIX) : stderr_head.index(b"\n")]
    try:
        summary = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        return {}
    return summary if isinstance(summary, dict) else {}


def _with_selection(
    report: CopyOutReport, rejections: _Rejections, *, truncated: bool, summary: dict[str, object]
) -> CopyOutReport:
    """The report with what the selection left out added after what the stream itself refused. It comes
    from the sandbox, so it is only read as bounded text and counts, never as an instruction."""
    skipped = summary.get("skipped")
    for item in skipped if isinstance(skipped, list) else []:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(part, str) for part in item):
            rejections.add(item[0], item[1][:200])
        else:
            rejections.count += 1
    listed_by_selection = len(skipped) if isinstance(skipped, list) else 0
    count = summary.get("skipped_count")
    if isinstance(count, int) and not isinstance(count, bool) and count > listed_by_selection:
        rejections.count += min(count, 10**9) - listed_by_selection
    return CopyOutReport(
        files=report.files,
        rejected=rejections.listed,
        truncated=truncated or summary.get("capped") is True,
        rejected_unlisted=rejections.count - len(rejections.listed),
        counted_all=summary.get("complete") is not False,
    )
