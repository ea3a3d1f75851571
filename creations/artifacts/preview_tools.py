"""Running preview tools (ffmpeg, pdftoppm, fluidsynth, Chromium) on hostile files, bounded.

Each tool runs in its own process group with a wall-clock timeout, a CPU-time
limit, a cap on the size of files it writes and (except Chromium, whose V8
reserves huge address space) an address-space limit; on timeout the whole group
is killed.
"""

import contextlib
import logging
import os
import resource
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

logger = logging.getLogger(__name__)
OUTPUT_FILE_LIMIT_BYTES = 512 * 1024 * 1024


class PreviewToolError(Exception):
    pass


def _limits(*, memory_bytes: int | None, cpu_seconds: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_FILE_LIMIT_BYTES, OUTPUT_FILE_LIMIT_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return apply


def run_tool(argv: list[str], *, cwd: Path, limit_memory: bool = True, timeout: float | None = None) -> None:
    """Run one tool to completion or raise PreviewToolError (never hangs, never leaves children)."""
    timeout = timeout or settings.PREVIEW_TIMEOUT
    memory = settings.PREVIEW_MEMORY_BYTES if limit_memory else None
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_limits(memory_bytes=memory, cpu_seconds=int(timeout) * 2 + 1),
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "LANG": "C.UTF-8"},
        )
    except OSError as exc:
        raise PreviewToolError(f"{argv[0]} could not start: {exc}") from exc
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise PreviewToolError(f"{argv[0]} took longer than {timeout:.0f} s") from None
    finally:
        _kill_group(process)  # background children (Chromium helpers) go too
    if process.returncode != 0:
        tail = (stderr or b"")[-500:].decode("utf-8", "replace")
        raise PreviewToolError(f"{argv[0]} exited with {process.returncode}: {tail}")


def _kill_group(process: "subprocess.Popen[bytes]") -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        logger.warning("preview tool %s did not exit after SIGKILL", process.pid)
