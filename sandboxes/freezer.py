"""Freezing an idle sandbox through its cgroup, so it costs no CPU while the model thinks.

Under gVisor's systrap platform (runsc release 20240729, the one Debian ships)
an idle sandbox is not idle: a monitor loop wakes every 400 µs, about 2-4 % of
a core per sandbox doing nothing, so fifty runs waiting on a slow model burn a
core or more (fixed upstream in 2026, google/gvisor#13470). The kernel's
cgroup freezer stops every process of the sandbox, the sentry included, in a
fraction of a millisecond and thaws them as fast.

A sandbox is frozen only between commands and only when nothing of the
agent's still runs in it (the shell reports its process count), so background
jobs and servers keep running. Whoever needs the sandbox thaws it first.
Without write access to the cgroup (say, a worker in a container) nothing is
frozen and everything works as before.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from sandboxes.container_cgroup import CGROUP_ROOT, PROC_ROOT, container_cgroups

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Freezer:
    """The freeze control of one container's cgroup (v1 freezer.state or v2 cgroup.freeze)."""

    control: Path
    frozen_value: str
    thawed_value: str

    @classmethod
    def for_container(
        cls, pid: int, container_id: str, *, proc: Path = PROC_ROOT, cgroups: Path = CGROUP_ROOT
    ) -> Freezer | None:
        """The freezer of the cgroup holding `pid` (the container's sandbox
        process), or None when there is none we may write. The cgroup must be
        the container's own (its path names the container), never a shared one."""
        for group in container_cgroups(pid, container_id, "freezer", proc=proc, cgroups=cgroups):
            if group.version == 1:
                freezer = cls(group.directory / "freezer.state", "FROZEN", "THAWED")
            else:
                freezer = cls(group.directory / "cgroup.freeze", "1", "0")
            if os.access(freezer.control, os.W_OK):
                return freezer
        return None

    def freeze(self) -> bool:
        return self._write(self.frozen_value)

    def thaw(self) -> bool:
        return self._write(self.thawed_value)

    def is_frozen(self) -> bool:
        try:
            state = self.control.read_text().strip()
        except OSError:
            return False
        return state in {self.frozen_value, "FREEZING"}

    def _write(self, value: str) -> bool:
        try:
            self.control.write_text(value)
        except OSError as exc:  # the container is gone, or the cgroup with it
            logger.debug("could not write %s to %s: %s", value, self.control, exc)
            return False
        return True


def thaw_container(container_id: str, pid: int) -> None:
    """Thaw a container before removing it: a frozen gVisor sandbox cannot
    answer the runtime's kill. Best effort (the janitor uses it)."""
    freezer = Freezer.for_container(pid, container_id)
    if freezer is not None:
        freezer.thaw()
