"""Helpers for sandbox tests: sandboxes with tighter limits, for fast limit tests."""

from __future__ import annotations

import dataclasses
import tracemalloc
from typing import Any

from sandboxes.docker_runtime import DockerSandbox, SandboxConfig, start_sandbox
from sandboxes.runtime import CommandResult

TEST_LABELS = {"atelier.owner": "tests", "atelier.run_id": "tests"}


def start_with(**overrides: Any) -> DockerSandbox:
    config = dataclasses.replace(SandboxConfig.from_settings(), **overrides)
    return start_sandbox(TEST_LABELS, config=config)


@dataclasses.dataclass(frozen=True)
class MeasuredCommand:
    result: CommandResult
    worker_peak_bytes: int  # the most this process held meanwhile (tracemalloc)
    streamed_chars: int  # what reached the live output callback


def run_measured(sandbox: DockerSandbox, command: str, *, timeout: float) -> MeasuredCommand:
    """Run a command while measuring what it costs the worker: peak memory and live output."""
    streamed = 0

    def count(chunk: str) -> None:
        nonlocal streamed
        streamed += len(chunk)

    tracemalloc.start()
    try:
        result = sandbox.run_command(command, timeout=timeout, on_output=count)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return MeasuredCommand(result=result, worker_peak_bytes=peak, streamed_chars=streamed)
