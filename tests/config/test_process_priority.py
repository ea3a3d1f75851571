"""A program the stack launcher starts at a priority runs at that priority, whatever the starting
process's own: a benchmark that raised its own (its clients stand for browsers) still starts its
web tier at the web tier's priority and its worker at the worker's."""

from __future__ import annotations

import os
import subprocess
import sys
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
