"""One creation from the terminal (`manage.py create`), outside the runs
service: acquire a sandbox, copy the inputs in, run the agent, copy the
outputs out, and release the sandbox whatever happens."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sandboxes.agent.events import AgentLimits, AgentOutcome, Emit
from sandboxes.agent.loop import run_agent
from sandboxes.agent.model import ModelClient
from sandboxes.docker_runtime import LABEL_OWNER, LABEL_RUN_ID
from sandboxes.runtime import CommandResult, CopyOutReport, OutputCallback, Sandbox, SandboxProvider

log = logging.getLogger(__name__)

CLI_OWNER = "cli"
FAILED_REASONS = frozenset({"model_error", "sandbox_error"})
NO_COPY_REASONS = frozenset({"cancelled", "sandbox_error"})  # nothing to copy, or the person wants out


class InputError(ValueError):
    """The input directory cannot be used; the message says why."""


@dataclass(frozen=True)
class OneShotResult:
    run_id: str
    outcome: AgentOutcome
    copied: CopyOutReport | None  # None when nothing was copied
    copy_error: str = ""


def new_run_id() -> str:
    return f"cli-{uuid.uuid4().hex[:12]}"


def read_input_dir(directory: Path, *, max_bytes: int) -> dict[str, bytes]:
    """Every regular file under `directory`, by POSIX path relative to it."""
    if not directory.exists():
        raise InputError(f"the input directory {directory} does not exist")
    if not directory.is_dir():
        raise InputError(f"{directory} is not a directory")
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(directory.rglob("*")):
        if not path.is_file():
            continue
        total += path.stat().st_size
        if total > max_bytes:
            raise InputError(f"the files in {directory} are larger than the limit of {max_bytes} bytes")
        files[path.relative_to(directory).as_posix()] = path.read_bytes()
    return files


class StartingSandbox:
    """A sandbox starting in a background thread (acquire, then copy the
    inputs in), so the model's first request overlaps the container's cold
    start. Every use waits until it is ready; a failed start raises there."""

    def __init__(
        self,
        acquire: Callable[[], Sandbox],
        prepare: Callable[[Sandbox], None],
        *,
        on_acquired: Callable[[Sandbox], None] | None = None,
    ) -> None:
        self._acquire = acquire
        self._prepare = prepare
        self._on_acquired = on_acquired
        self._ready = threading.Event()
        self.sandbox: Sandbox | None = None  # set once acquired, even if preparing it failed
        self.error: BaseException | None = None
        threading.Thread(target=self._start, name="sandbox-start", daemon=True).start()

    def _start(self) -> None:
        try:
            self.sandbox = self._acquire()
            if self._on_acquired is not None:
                self._on_acquired(self.sandbox)
            self._prepare(self.sandbox)
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

    def release(self, provider: SandboxProvider) -> None:
        """Once the start has finished, give back whatever was acquired."""
        self._ready.wait()
        if self.sandbox is not None:
            provider.release(self.sandbox)

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

    def stop(self) -> None:
        self._ready.wait()
        if self.sandbox is not None:
            self.sandbox.stop()

    def is_running(self) -> bool:
        is_running = getattr(self.wait(), "is_running", None)
        return True if is_running is None else bool(is_running())


def run_one_shot(
    *,
    provider: SandboxProvider,
    model: ModelClient,
    brief: str,
    limits: AgentLimits,
    input_files: Mapping[str, bytes],
    output_dir: Path,
    emit: Emit,
    cancel: threading.Event,
    run_id: str,
    on_sandbox: Callable[[Sandbox], None] | None = None,
) -> OneShotResult:
    """Raises only when no sandbox can be had or the inputs cannot be copied
    in (SandboxError, CopyInError); the sandbox is released in every path."""
    labels = {LABEL_OWNER: CLI_OWNER, LABEL_RUN_ID: run_id}

    def copy_inputs(sandbox: Sandbox) -> None:
        if input_files:
            sandbox.write_files(dict(input_files))

    # on_sandbox lets the caller stop the sandbox from a signal handler.
    starting = StartingSandbox(lambda: provider.acquire(labels=labels), copy_inputs, on_acquired=on_sandbox)
    try:
        outcome = run_agent(
            sandbox=starting,
            model=model,
            brief=brief,
            limits=limits,
            emit=emit,
            cancel=cancel,
            input_files=sorted(input_files),
        )
        starting.wait()  # a failed start is reported as such, not as the run's outcome
        if outcome.reason in NO_COPY_REASONS:
            return OneShotResult(run_id=run_id, outcome=outcome, copied=None)
        try:
            copied = starting.copy_out(output_dir)
        except Exception as error:  # the outcome stands; say why nothing was copied
            log.debug("copy out failed", exc_info=True)
            return OneShotResult(
                run_id=run_id, outcome=outcome, copied=None, copy_error=str(error) or type(error).__name__
            )
        return OneShotResult(run_id=run_id, outcome=outcome, copied=copied)
    finally:
        starting.release(provider)
