"""One agent run in one sandbox, from start to release: the orchestration that
web runs (creations.runs.execution) and the terminal (`manage.py create`)
share.

The sandbox starts in a background thread (acquire, then copy the inputs in)
while the agent already sends its first request to the model, so a cold
start and the model's first reply overlap. Every use of the sandbox waits
until it is ready; a failed start is raised as `SandboxStartError` once the
agent has stopped. The sandbox is released in every path (`close`, or the
`with` block), and `stop_sandbox` may be called from any thread (a cancel's
grace timer, a signal handler) to interrupt a running command.

Django-free: callers say what a run is through labels and callbacks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO

from sandboxes.agent.events import AgentLimits, AgentOutcome, BudgetCheck, Continuation, Emit, Inbox
from sandboxes.agent.loop import run_agent
from sandboxes.agent.model import ModelClient
from sandboxes.runtime import (
    ByteSource,
    CommandResult,
    CopyOutReport,
    OutputCallback,
    Sandbox,
    SandboxProvider,
    SnapshotReport,
)


class SandboxStartError(Exception):
    """The sandbox could not be started or prepared; the message says why."""


class StartingSandbox:
    """A sandbox starting in a background thread (acquire, then prepare it),
    usable as a `Sandbox` at once: every use waits until it is ready."""

    def __init__(
        self,
        acquire: Callable[[], Sandbox],
        prepare: Callable[[Sandbox], None],
        *,
        on_ready: Callable[[Sandbox], None] | None = None,
    ) -> None:
        self._acquire = acquire
        self._prepare = prepare
        self._on_ready = on_ready
        self._ready = threading.Event()
        self.sandbox: Sandbox | None = None  # set once acquired, even if preparing it failed
        self.acquired_at: float | None = None
        self.error: BaseException | None = None
        threading.Thread(target=self._start, name="sandbox-start", daemon=True).start()

    def _start(self) -> None:
        try:
            self.sandbox = self._acquire()
            self.acquired_at = time.monotonic()
            self._prepare(self.sandbox)
            if self._on_ready is not None:
                self._on_ready(self.sandbox)
        except BaseException as error:  # handed to whoever uses the sandbox
            self.error = error
        finally:
            self._ready.set()

    def wait(self) -> Sandbox:
        self._ready.wait()
        if self.error is not None:
            raise self.error
        assert self.sandbox is not None
        return self.sandbox

    def wait_acquired(self) -> Sandbox | None:
        """Once the start has finished: whatever was acquired, started well or not."""
        self._ready.wait()
        return self.sandbox

    # --- the Sandbox protocol, waiting for the start ---------------------------

    @property
    def id(self) -> str:
        return self.wait().id

    def run_command(self, command: str, *, timeout: float, on_output: OutputCallback | None = None) -> CommandResult:
        return self.wait().run_command(command, timeout=timeout, on_output=on_output)

    def exec(self, argv: list[str], *, stdin: bytes | None = None, timeout: float = 60) -> tuple[int, bytes]:
        return self.wait().exec(argv, stdin=stdin, timeout=timeout)

    def write_files(self, files: Mapping[str, bytes], *, dest: str = "/testbed/input") -> None:
        self.wait().write_files(files, dest=dest)

    def copy_out(self, dest_dir: Path, *, src: str = "/testbed/output") -> CopyOutReport:
        return self.wait().copy_out(dest_dir, src=src)

    def save_snapshot(self, dest: IO[bytes], *, max_bytes: int) -> SnapshotReport | None:
        return self.wait().save_snapshot(dest, max_bytes=max_bytes)

    def restore_snapshot(self, source: ByteSource, *, size: int) -> None:
        self.wait().restore_snapshot(source, size=size)

    def stop(self) -> None:
        sandbox = self.wait_acquired()
        if sandbox is not None:
            sandbox.stop()

    def is_running(self) -> bool:
        return self.wait().is_running()


class SandboxSession:
    """Start a sandbox for one run, let the agent work in it, copy its output out, release it."""

    def __init__(
        self,
        *,
        provider: SandboxProvider,
        labels: Mapping[str, str],
        input_files: Mapping[str, bytes] = {},
        on_ready: Callable[[Sandbox], None] | None = None,
        restore: Callable[[Sandbox], None] | None = None,
    ) -> None:
        """`on_ready(sandbox)` runs on the start thread once the inputs are in (not on a failed start).
        `restore(sandbox)`, when given, fills /testbed first (a previous version's files), on that thread too."""
        self._provider = provider
        self._restore = restore
        self.input_files = dict(input_files)
        self._lock = threading.Lock()
        self._stopped = False
        self._released_after: float | None = None
        self.starting = StartingSandbox(
            lambda: provider.acquire(labels=dict(labels)), self._copy_inputs, on_ready=on_ready
        )

    def _copy_inputs(self, sandbox: Sandbox) -> None:
        if self._restore is not None:
            self._restore(sandbox)
        if self.input_files:
            sandbox.write_files(self.input_files)

    def __enter__(self) -> SandboxSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    @property
    def stopped(self) -> bool:
        """The sandbox was stopped from outside (a cancel, an interrupt): it has nothing left to copy."""
        return self._stopped

    def run_agent(
        self,
        *,
        model: ModelClient,
        brief: str,
        limits: AgentLimits,
        emit: Emit,
        cancel: threading.Event,
        over_budget: BudgetCheck | None = None,
        continuation: Continuation | None = None,
        inbox: Inbox | None = None,
        renamed_inputs: Mapping[str, str] | None = None,
    ) -> AgentOutcome:
        """The agent's whole run; raises SandboxStartError when the sandbox never became ready."""
        outcome = run_agent(
            sandbox=self.starting,
            model=model,
            brief=brief,
            limits=limits,
            emit=emit,
            cancel=cancel,
            input_files=sorted(self.input_files),
            over_budget=over_budget,
            continuation=continuation,
            inbox=inbox,
            renamed_inputs=renamed_inputs,
        )
        try:
            self.starting.wait()
        except Exception as error:  # a failed start is the reason, not the agent's outcome
            raise SandboxStartError(str(error) or type(error).__name__) from error
        return outcome

    def copy_out(self, dest_dir: Path) -> CopyOutReport:
        """What the agent left in /testbed/output, copied safely to `dest_dir`."""
        return self.starting.copy_out(dest_dir)

    def save_snapshot(self, dest: IO[bytes], *, max_bytes: int) -> SnapshotReport | None:
        """The whole /testbed, compressed, for the next version to start from (sandboxes.snapshots)."""
        return self.starting.save_snapshot(dest, max_bytes=max_bytes)

    def stop_sandbox(self) -> None:
        """Stop the sandbox now, from any thread (waits for a start under way)."""
        with self._lock:
            self._stopped = True
        self.starting.stop()

    def close(self) -> None:
        """Release the sandbox (back to the pool, or removed); safe to call twice."""
        with self._lock:
            if self._released_after is not None:
                return
            self._released_after = 0.0
        sandbox = self.starting.wait_acquired()
        if sandbox is None:
            return
        try:
            self._provider.release(sandbox)
        except Exception:
            sandbox.stop()
            raise
        finally:
            if self.starting.acquired_at is not None:
                self._released_after = time.monotonic() - self.starting.acquired_at

    @property
    def sandbox_seconds(self) -> float:
        """How long the run held its sandbox (from acquired to released)."""
        return self._released_after or 0.0
