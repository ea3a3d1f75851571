"""`make test` runs the fast tests and the checks as background work (devstack/background.py): a command started
through it lands in a CPU cgroup weighted below the agents' sandboxes, and runs anyway, saying
why, where it may not have one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devstack import background
from sandboxes.cpu_priority import AGENTS

ROOT = Path(__file__).resolve().parents[2]


def _fake_v1(root: Path) -> Path:
    (root / "cpu").mkdir(parents=True)
    (root / "cpu" / "cpu.shares").write_text("1024\n")
    return root


def _fake_v2(root: Path, controllers: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text(controllers)
    return root


def test_under_cgroup_v1_the_group_weighs_half_the_sandboxes_and_takes_the_process(tmp_path: Path) -> None:
    root = _fake_v1(tmp_path / "cgroup")
    group = background.enter_background_group(4242, root)
    assert group == root / "cpu" / "atelier-background"
    assert int((group / "cpu.shares").read_text()) == AGENTS.shares // 2 < AGENTS.shares
    assert (group / "cgroup.procs").read_text().strip() == "4242"


def test_under_cgroup_v2_the_cpu_controller_is_handed_down_first(tmp_path: Path) -> None:
    root = _fake_v2(tmp_path / "cgroup")
    group = background.enter_background_group(4242, root)
    assert "+cpu" in (root / "cgroup.subtree_control").read_text()
    assert 1 <= int((group / "cpu.weight").read_text()) < AGENTS.weight
    assert (group / "cgroup.procs").read_text().strip() == "4242"


def test_without_a_cpu_controller_nothing_is_made(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="no cgroup cpu controller"):
        background.enter_background_group(4242, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_without_arguments_it_says_how_to_call_it() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "devstack.background", "--"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode != 0
    assert "usage: python -m devstack.background -- COMMAND" in done.stderr


def test_where_it_may_not_make_the_group_the_command_still_runs_and_it_says_why(tmp_path: Path) -> None:
    no_controller = (
        "import sys; from pathlib import Path; from devstack import background; "
        f"background.CGROUP_ROOT = Path({str(tmp_path)!r}); background.main(sys.argv[1:])"
    )
    done = subprocess.run(
        [sys.executable, "-c", no_controller, "--", "echo", "ran"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran\n"
    assert "running echo at normal CPU weight: no cgroup cpu controller" in done.stderr


def test_on_this_machine_the_command_runs_inside_the_group() -> None:
    if not os.access(background.CGROUP_ROOT, os.W_OK):
        pytest.skip("this process may not write the cgroup file system (the tests run as root in CI)")
    done = subprocess.run(
        [sys.executable, "-m", "devstack.background", "--", "cat", "/proc/self/cgroup"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    group, control, weight = background.background_group()
    # "N:cpu,cpuacct:/path" under cgroup v1, "0::/path" under v2
    cpu_groups = [
        line.split(":", 2)[2] for line in done.stdout.splitlines() if "cpu" in line.split(":", 2)[1].split(",")
    ]
    unified = [line.split(":", 2)[2] for line in done.stdout.splitlines() if line.startswith("0::")]
    assert f"/{group.name}" in (cpu_groups if control == "cpu.shares" else unified), done.stdout
    assert int((group / control).read_text()) == weight
