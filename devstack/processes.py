"""A program of the stack as a process of its own: started in a process group of its own with its
output in a log file, waited for until it is ready, and stopped with all its children."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from devstack import Missing
from devstack.ports import port_open

ROOT = Path(__file__).resolve().parents[1]  # the repository: where manage.py and config/ are
READY_TIMEOUT = 60.0


def venv_executable(name: str) -> str:
    """A console script of this virtualenv (celery, daphne), beside the running interpreter."""
    return str(Path(sys.executable).parent / name)


def require_executable(name: str, how: str) -> str:
    """The path of `name` on PATH; `Missing` (saying `how` to get it) when there is none."""
    found = shutil.which(name)
    if found is None:
        raise Missing(f"{name} ({how})")
    return found


def niced(priority: int, argv: list[str]) -> list[str]:
    """`argv` run at the CPU priority `priority`, a nice value counted from the default (0), whatever
    this process's own: `nice -n` only adds to the caller's, so a benchmark that raised its own
    priority would otherwise start its web tier higher still and its batch work at the default. On a
    box of few cores the batch work (worker and sandboxes) would otherwise starve the processes that
    serve the pages."""
    step = priority - os.nice(0)
    return ["nice", "-n", str(step), *argv] if step else argv


@dataclass
class Process:
    """One program of the stack. `start()` runs it from the repository's root, its output appended
    to `log_path`; `stop()` ends its whole process group (SIGTERM, then SIGKILL after `timeout`)."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.log_path.open("ab")
        # A process group of its own (stop() ends it whole), in the session that started it. Not a
        # session of its own: where the kernel groups processes by session for CPU (autogroups,
        # Debian's default), each would weigh as much as everything else on the machine together, its
        # nice value counting only among its own children: a benchmark's web tier at nice -10 had no
        # more of the CPU than its worker at 10, and each of a test stack's programs weighed as much
        # as the whole `make test` session beside it.
        self.popen = subprocess.Popen(
            self.argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, process_group=0
        )
        log.close()

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            assert self.popen is not None
            os.killpg(self.popen.pid, sig)

    def kill(self) -> None:
        """SIGKILL the program and all its children, as a crash would."""
        self.signal(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait(timeout=10)
        self.popen = None

    def stop(self, timeout: float = 15) -> None:
        if self.popen is None:
            return
        self.signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.popen.wait(timeout=10)
        self.popen = None

    def log_size(self) -> int:
        """Where the log ends now: `wait_for_log(..., after=)` then reads only what comes next."""
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _pauses() -> Iterator[float]:
    """Between looks at a starting program: 5 ms at first, doubling to 100 ms. A Redis listens within
    milliseconds and daphne or a worker within seconds; a fixed 100 ms added about 50 ms to every
    start, and tests start hundreds of them."""
    pause = 0.005
    while True:
        yield pause
        pause = min(pause * 2, 0.1)


def wait_for_log(proc: Process, text: str, *, after: int = 0) -> None:
    """Until `text` appears in the log past byte `after`; RuntimeError if the program exits first
    or READY_TIMEOUT passes."""
    deadline, pauses = time.monotonic() + READY_TIMEOUT, _pauses()
    while time.monotonic() < deadline:
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited while starting:\n{proc.log_tail()}")
        try:
            with proc.log_path.open("rb") as handle:
                handle.seek(after)
                if text.encode() in handle.read():
                    return
        except OSError:
            pass
        time.sleep(next(pauses))
    raise RuntimeError(f"{proc.name} did not become ready:\n{proc.log_tail()}")


def wait_for_port(proc: Process, port: int) -> None:
    """Until the program listens on `port` (loopback); RuntimeError if it exits first or
    READY_TIMEOUT passes."""
    deadline, pauses = time.monotonic() + READY_TIMEOUT, _pauses()
    while time.monotonic() < deadline:
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited while starting:\n{proc.log_tail()}")
        if port_open("127.0.0.1", port):
            return
        time.sleep(next(pauses))
    raise RuntimeError(f"{proc.name} did not listen on {port}:\n{proc.log_tail()}")
