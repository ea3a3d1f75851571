"""An in-memory stand-in for a sandbox, for tests of the loop's logic (the
real gVisor sandbox is exercised in test_agent_in_sandbox.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sandboxes.runtime import ByteSource, CommandResult, CopyOutReport, OutputCallback, SnapshotReport


@dataclass
class FakeEditorResult:
    output: str
    is_error: bool = False


@dataclass
class FakeSandbox:
    """Echoes each command back as its output, streamed in two pieces; a
    command `fail` exits 1 and `explode` breaks the sandbox itself."""

    commands: list[str] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)
    stopped: bool = False
    restored: bytes | None = None

    @property
    def id(self) -> str:
        return "fake"

    def run_command(self, command: str, *, timeout: float, on_output: OutputCallback | None = None) -> CommandResult:
        if command == "explode":
            raise RuntimeError("container is gone")
        self.commands.append(command)
        output = f"ran: {command}\n"
        if on_output is not None:
            on_output(output[:4])
            on_output(output[4:])
        return CommandResult(exit_code=1 if command == "fail" else 0, output=output, duration=0.01)

    def exec(self, argv: list[str], *, stdin: bytes | None = None, timeout: float = 60) -> tuple[int, bytes]:
        return 0, b""

    def write_files(self, files: Mapping[str, bytes], *, dest: str = "/testbed/input") -> None:
        return None

    def copy_out(self, dest_dir: Path, *, src: str = "/testbed/output") -> CopyOutReport:
        return CopyOutReport()

    def save_snapshot(self, dest: IO[bytes], *, max_bytes: int) -> SnapshotReport | None:
        dest.write(b"fake snapshot")
        return SnapshotReport(size=len(b"fake snapshot"), whole=True, testbed_bytes=0)

    def restore_snapshot(self, source: ByteSource, *, size: int) -> None:
        self.restored = source.read()

    def stop(self) -> None:
        self.stopped = True

    def is_running(self) -> bool:
        return not self.stopped

    def editor(self, sandbox: Any, **arguments: Any) -> FakeEditorResult:
        self.edits.append(arguments)
        return FakeEditorResult(output=f"{arguments['command']} {arguments['path']}: ok")
