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
from sandboxes.runtime import CopyOutReport, Sandbox, SandboxProvider

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
    sandbox: Sandbox = provider.acquire(labels={LABEL_OWNER: CLI_OWNER, LABEL_RUN_ID: run_id})
    try:
        if on_sandbox is not None:  # lets the caller stop it from a signal handler
            on_sandbox(sandbox)
        if input_files:
            sandbox.write_files(dict(input_files))
        outcome = run_agent(
            sandbox=sandbox,
            model=model,
            brief=brief,
            limits=limits,
            emit=emit,
            cancel=cancel,
            input_files=sorted(input_files),
        )
        if outcome.reason in NO_COPY_REASONS:
            return OneShotResult(run_id=run_id, outcome=outcome, copied=None)
        try:
            copied = sandbox.copy_out(output_dir)
        except Exception as error:  # the outcome stands; say why nothing was copied
            log.debug("copy out failed", exc_info=True)
            return OneShotResult(
                run_id=run_id, outcome=outcome, copied=None, copy_error=str(error) or type(error).__name__
            )
        return OneShotResult(run_id=run_id, outcome=outcome, copied=copied)
    finally:
        provider.release(sandbox)
