"""Where one container's own cgroup is, found from the container's sandbox process.

The worker changes a sandbox's cgroup after Docker made it: it freezes the group
between commands (sandboxes/freezer.py) and lets it spend saved CPU time in
bursts (sandboxes/cpu_burst.py). Both find the group the same way, from
/proc/<pid>/cgroup of the container's process, and keep only a path that names
the container: never a shared group, where a write could reach the worker itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_ROOT = Path("/proc")


@dataclass(frozen=True)
class ContainerCgroup:
    """One directory of the container's own cgroup, and the cgroup version whose files it has."""

    directory: Path
    version: int  # 1: one hierarchy per controller; 2: the one tree


def container_cgroups(
    pid: int, container_id: str, controller: str, *, proc: Path = PROC_ROOT, cgroups: Path = CGROUP_ROOT
) -> list[ContainerCgroup]:
    """The container's own groups that hold `controller`'s files, cgroup v1's hierarchy first
    (it takes precedence on hybrid hosts), then v2's tree. Empty when the process is not
    visible here (another PID namespace, or gone) or no group names the container."""
    if pid <= 0:
        return []
    try:
        lines = (proc / str(pid) / "cgroup").read_text().splitlines()
    except OSError:
        return []
    found: list[ContainerCgroup] = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if container_id not in path:
            continue
        relative = path.lstrip("/")
        if controller in controllers.split(","):
            found.insert(0, ContainerCgroup(cgroups / controller / relative, 1))
        elif controllers == "":
            found.append(ContainerCgroup(cgroups / relative, 2))
    return found
