"""Run a command as background work: in a CPU cgroup of its own, weighted below the agents' sandboxes.

    python -m devstack.background -- pytest -n auto ...

`make test` runs the fast tests beside the rest of the suite. Left in the session's group, two busy
fast-test workers outweigh the sandboxes' parent group (an eighth of a process's weight,
sandboxes/cpu_priority.py), so the sandboxes the rest of the suite waits on got a sliver of a core,
and gVisor, starved, burned more CPU for the same work (an HTML screenshot beside two fast-test
workers: 14-22 s and 30-41 CPU-s, against 5 s and 10 with a normal weight). Nice values do not
help: the kernel's autogroups weigh a session's processes together, nice only among themselves.
In a group of half the sandboxes' weight the fast tests still take every cycle nobody else wants,
and yield to sandboxes at once (bench/background_tests.py).

Where this process may not write the cgroup file system (not root, or a host whose cgroups systemd
owns), the command runs as it is, and a line on stderr says why.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sandboxes.cpu_priority import AGENTS

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_NAME = "atelier-background"
SHARES = AGENTS.shares // 2  # cgroup v1 cpu.shares
WEIGHT = max(AGENTS.weight // 2, 1)  # cgroup v2 cpu.weight


def background_group(root: Path = CGROUP_ROOT) -> tuple[Path, str, int]:
    """(the group's directory, its weight file, the weight) for this host's cgroup version."""
    if (root / "cpu" / "cpu.shares").exists():
        return root / "cpu" / GROUP_NAME, "cpu.shares", SHARES
    if (root / "cgroup.controllers").exists():
        return root / GROUP_NAME, "cpu.weight", WEIGHT
    raise OSError(f"no cgroup cpu controller at {root}")


def enter_background_group(pid: int, root: Path = CGROUP_ROOT) -> Path:
    """Move `pid` (and so what it starts afterwards) into the background group, made if missing."""
    group, control, weight = background_group(root)
    if control == "cpu.weight":  # cgroup v2: the root hands the cpu controller down first
        subtree = root / "cgroup.subtree_control"
        if "cpu" not in subtree.read_text().split():
            subtree.write_text("+cpu\n")
    group.mkdir(exist_ok=True)
    (group / control).write_text(f"{weight}\n")
    (group / "cgroup.procs").write_text(f"{pid}\n")
    return group


def main(argv: list[str]) -> None:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        sys.exit("usage: python -m devstack.background -- COMMAND [ARG ...]")
    try:
        enter_background_group(os.getpid(), CGROUP_ROOT)
    except OSError as exc:
        sys.stderr.write(f"devstack.background: running {command[0]} at normal CPU weight: {exc}\n")
    os.execvp(command[0], command)  # noqa: S606 - the command as given, with no shell in between


if __name__ == "__main__":
    main(sys.argv[1:])
