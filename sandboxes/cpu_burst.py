"""Letting a sandbox spend, in a short burst, CPU time it left unused.

A sandbox may use SANDBOX_CPUS cores on average, which the kernel enforces per
100 ms period (the CFS quota). Under gVisor a starting process keeps several
host threads busy at once (the sentry and its stubs), so a command that starts
a few processes after the sandbox sat idle used up its period's quota within
milliseconds and was stopped until the period ended, although over the last
second it had used a fraction of its share. Measured with `bench/sandbox.py`
(two sandboxes taking turns, each command after a 0.2 s pause): a four-process
pipeline 248 ms at the median without a burst, 174 ms with it; 2.9 s throttled
over 90 commands without, none with.

The kernel's CFS burst (Linux 5.14 and later) banks a group's unused quota, up
to the burst, and lets it be spent above the quota: the average stays at
SANDBOX_CPUS, a short spike after a pause is not throttled. Docker does not set
it, so the worker writes it into the container's own cgroup once the container
runs, as large as one period's quota (the most the kernel accepts). Best effort,
like freezing: where the worker may not write the cgroup, or the kernel has no
burst, sandboxes run as before.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sandboxes.container_cgroup import CGROUP_ROOT, PROC_ROOT, ContainerCgroup, container_cgroups

logger = logging.getLogger(__name__)


def _quota_and_burst_file(group: ContainerCgroup) -> tuple[int | None, Path]:
    """The group's CPU quota per period in microseconds (None: no quota), and where its burst is set."""
    if group.version == 1:
        quota = int((group.directory / "cpu.cfs_quota_us").read_text().strip())
        return (quota if quota > 0 else None), group.directory / "cpu.cfs_burst_us"
    limit = (group.directory / "cpu.max").read_text().split()[0]  # "<quota> <period>" or "max <period>"
    return (None if limit == "max" else int(limit)), group.directory / "cpu.max.burst"


def allow_cpu_burst(pid: int, container_id: str, *, proc: Path = PROC_ROOT, cgroups: Path = CGROUP_ROOT) -> bool:
    """Let the container's cgroup bank up to one period's quota of unused CPU time and spend it
    above the quota. False when nothing was set: no quota, no burst in this kernel, or no write access."""
    for group in container_cgroups(pid, container_id, "cpu", proc=proc, cgroups=cgroups):
        try:
            quota, burst_file = _quota_and_burst_file(group)
            if quota is None or not burst_file.exists():
                continue
            burst_file.write_text(str(quota))
        except (OSError, ValueError, IndexError) as exc:  # read-only, gone with the container, or unreadable
            logger.debug("could not allow a CPU burst in %s: %s", group.directory, exc)
            continue
        return True
    return False
