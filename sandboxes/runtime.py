"""The sandbox runtime protocol: what the agent and the run service may ask of
the isolated computer, independent of the engine behind it.

The Docker/gVisor implementation lives in `sandboxes.docker_runtime`; tests may
add fakes. Everything here is engine-neutral and free of Django.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

OutputCallback = Callable[[str], None]


@dataclass(frozen=True)
class CommandResult:
    """The outcome of one `execute_bash` command in the persistent shell."""

    exit_code: int | None  # None when the command was killed (timeout, shell died)
    output: str  # what the model sees: truncated (head + tail + note) past the limit
    duration: float  # seconds
    timed_out: bool = False
    output_clipped: bool = False  # stopped for printing more than the shell reads per command
    shell_restarted: bool = False  # the shell died and a fresh one was started
    full_output_path: str | None = None  # in-sandbox path of the whole output, when truncated
    sandbox_died: bool = False  # the sandbox itself is gone (OOM-killed, stopped): no command can run


@dataclass(frozen=True)
class CopiedFile:
    path: str  # relative to the copied directory, POSIX separators
    local_path: Path
    size: int


@dataclass(frozen=True)
class CopyOutReport:
    files: list[CopiedFile] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (name, reason): the first ones not copied
    truncated: bool = False  # a byte or file-count cap was reached
    rejected_unlisted: int = 0  # entries not copied besides those named in `rejected`
    counted_all: bool = True  # False: the tree was too big to walk to its end, and more was left out

    @property
    def rejected_total(self) -> int:
        """How many entries were not copied, named or not (at least this many when not `counted_all`)."""
        return len(self.rejected) + self.rejected_unlisted


class ByteSource(Protocol):
    """Where a snapshot is read from: a local or a storage file opened for reading."""

    def read(self, size: int = -1, /) -> bytes: ...


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
            f"Only output/ was kept: the whole /testbed was {megabytes_text(self.testbed_bytes)}, "
            "over the snapshot limit, so work files, inputs and caches were left out."
        )


def megabytes_text(size: int) -> str:
    if size >= 1 << 30:
        return f"{size / (1 << 30):.1f} GB"
    return f"{size / (1 << 20):.1f} MB"


class Sandbox(Protocol):
    """One running, isolated computer for one run."""

    @property
    def id(self) -> str: ...

    def run_command(self, command: str, *, timeout: float, on_output: OutputCallback | None = None) -> CommandResult:
        """Run `command` in the sandbox's persistent bash (cwd, env and
        background jobs persist between calls). Output is streamed to
        `on_output` as it is printed."""
        ...

    def exec(self, argv: list[str], *, stdin: bytes | None = None, timeout: float = 60) -> tuple[int, bytes]:
        """Run one process outside the persistent shell; returns (exit code, stdout+stderr)."""
        ...

    def write_files(self, files: Mapping[str, bytes], *, dest: str = "/testbed/input") -> None:
        """Write files (relative path -> content) under `dest`."""
        ...

    def copy_out(self, dest_dir: Path, *, src: str = "/testbed/output") -> CopyOutReport:
        """Copy the tree at `src` to `dest_dir` safely: no symlinks followed,
        nothing outside the tree, no special files, byte and count caps."""
        ...

    def save_snapshot(self, dest: IO[bytes], *, max_bytes: int) -> SnapshotReport | None:
        """Write /testbed, compressed, to `dest`: the whole tree when it fits `max_bytes`,
        else output/ only; None when not even that fits. The caller never unpacks it."""
        ...

    def restore_snapshot(self, source: ByteSource, *, size: int) -> None:
        """Unpack what save_snapshot wrote (`size` bytes) into /testbed."""
        ...

    def stop(self) -> None:
        """Stop and remove the sandbox; safe to call twice and from another thread."""
        ...

    def is_running(self) -> bool:
        """Whether the sandbox is still alive (asked after a failure: a dead one ends the run)."""
        ...


class SandboxProvider(Protocol):
    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        """A ready sandbox (from the warm pool when one is available)."""
        ...

    def release(self, sandbox: Sandbox) -> None: ...
