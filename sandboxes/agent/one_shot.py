"""One creation from the terminal (`manage.py create`), outside the runs
service, through the same sandbox session as web runs (sandboxes.agent.session):
the CLI's part is reading an input directory and deciding what to copy out."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sandboxes.agent.events import AgentLimits, AgentOutcome, Emit, OutcomeReason
from sandboxes.agent.model import ModelClient
from sandboxes.agent.session import SandboxSession
from sandboxes.container_spec import LABEL_OWNER, LABEL_RUN_ID
from sandboxes.runtime import CopyOutReport, SandboxProvider

log = logging.getLogger(__name__)

CLI_OWNER = "cli"
FAILED_REASONS = frozenset({OutcomeReason.MODEL_ERROR, OutcomeReason.SANDBOX_ERROR})
# Nothing to copy, or the person wants out.
NO_COPY_REASONS = frozenset({OutcomeReason.CANCELLED, OutcomeReason.SANDBOX_ERROR})


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
    on_session: Callable[[SandboxSession], None] | None = None,
) -> OneShotResult:
    """Raises SandboxStartError when no sandbox can be had or the inputs cannot
    be copied in; the sandbox is released in every path. `on_session` lets the
    caller stop the sandbox from a signal handler."""
    labels = {LABEL_OWNER: CLI_OWNER, LABEL_RUN_ID: run_id}
    with SandboxSession(provider=provider, labels=labels, input_files=input_files) as session:
        if on_session is not None:
            on_session(session)
        outcome = session.run_agent(model=model, brief=brief, limits=limits, emit=emit, cancel=cancel)
        if outcome.reason in NO_COPY_REASONS or session.stopped:
            return OneShotResult(run_id=run_id, outcome=outcome, copied=None)
        try:
            copied = session.copy_out(output_dir)
        except Exception as error:  # the outcome stands; say why nothing was copied
            log.debug("copy out failed", exc_info=True)
            return OneShotResult(
                run_id=run_id, outcome=outcome, copied=None, copy_error=str(error) or type(error).__name__
            )
        return OneShotResult(run_id=run_id, outcome=outcome, copied=copied)
