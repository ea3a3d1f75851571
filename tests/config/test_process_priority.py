"""A program the stack launcher starts at a priority runs at that priority, whatever the starting
process's own: a benchmark that raised its own (its clients stand for browsers) still starts its
web tier at the web tier's priority and its worker at the worker's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from devstack.processes import niced
from tests.support import require

ROOT = Path(__file__).resolve().parents[2]  # where `devstack` is imported from
REPORT_PRIORITY = [sys.executable, "-c", "import os; print(os.nice(0))"]


def _started_from(own: int, priority: int) -> int:
    """The priority `niced(priority, ...)` gives a child when the caller runs at `own`."""
    launcher = (
        "import os, subprocess, sys\n"
        f"os.nice({own} - os.nice(0))\n"
        "from devstack.processes import niced\n"
        f"argv = niced({priority}, {REPORT_PRIORITY!r})\n"
        "sys.stdout.write(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", launcher], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    return int(done.stdout)


@pytest.mark.parametrize(("own", "priority"), [(5, 10), (5, 5), (0, 10), (0, 0)])
def test_a_child_runs_at_the_priority_asked_for(own: int, priority: int) -> None:
    assert _started_from(own, priority) == priority


def test_a_process_that_raised_its_own_priority_starts_its_batch_work_lower_and_its_web_tier_no_higher() -> None:
    require(os.geteuid() == 0, "root (raising a process's priority)")
    assert _started_from(-10, 10) == 10  # the worker, not at the default
    assert _started_from(-10, -10) == -10  # the web tier, not at -20
    assert _started_from(-10, 0) == 0


def test_the_same_priority_needs_no_nice_at_all() -> None:
    assert niced(os.nice(0), ["true"]) == ["true"]


def test_a_stack_program_shares_the_cpu_with_the_session_that_started_it_and_stops_with_its_children(
    tmp_path: Path,
) -> None:
    """Its nice value then counts against the rest of the session (a session of its own would be a CPU
    autogroup of its own, as heavy as everything else together); its process group is still its own."""
    from devstack.processes import Process

    noted = tmp_path / "child"
    program = Process(
        "program", ["sh", "-c", f"sleep 60 & echo $! > {noted}; wait"], dict(os.environ), tmp_path / "program.log"
    )
    program.start()
    try:
        grandchild = int(_when_written(noted))
        assert program.popen is not None
        pid = program.popen.pid
        assert os.getsid(pid) == os.getsid(0)
        assert os.getpgid(pid) == pid
        assert os.getpgid(grandchild) == pid
        ours = Path("/proc/self/autogroup")
        if ours.exists():
            assert Path(f"/proc/{pid}/autogroup").read_text() == ours.read_text()
    finally:
        program.stop()
    assert _gone(grandchild)


def _when_written(path: Path) -> str:
    for _ in range(500):
        if path.exists() and path.read_text().strip():
            return path.read_text()
        time.sleep(0.01)
    raise AssertionError(f"{path} was not written")


def _gone(pid: int) -> bool:
    """The process ended (a zombie not yet reaped by whoever inherited it counts as ended)."""
    for _ in range(500):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.01)
    return False
