"""The host's cgroups, for tests of the sandboxes' CPU priority: a parent group of a test's own
(this machine's /atelier-sandboxes is left alone), where a sandbox's process sits, a group's weight."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import docker.errors

from sandboxes.cpu_priority import CGROUP_ROOT, Engine


@contextlib.contextmanager
def own_cgroup_parent() -> Iterator[str]:
    """A SANDBOX_CGROUP_PARENT no one else uses; its sandboxes and groups are removed afterwards."""
    name = f"atelier-tests-{uuid.uuid4().hex[:8]}"
    try:
        yield f"/{name}"
    finally:
        remove_sandboxes_under(f"/{name}")
        # Docker leaves the empty parent groups it made for the sandboxes, in every hierarchy.
        for group in [*sorted(CGROUP_ROOT.glob(f"*/{name}")), CGROUP_ROOT / name]:
            for directory in [*sorted((d for d in group.rglob("*") if d.is_dir()), reverse=True), group]:
                with contextlib.suppress(OSError):
                    directory.rmdir()


def _container_groups(parent: str) -> dict[str, list[Path]]:
    """Container id -> its groups under `parent`, in every hierarchy (v1) or the one tree (v2)."""
    name = parent.strip("/")
    found: dict[str, list[Path]] = {}
    for group in [*CGROUP_ROOT.glob(f"*/{name}/*"), *CGROUP_ROOT.glob(f"{name}/*")]:
        if group.is_dir() and len(group.name) == 64:
            found.setdefault(group.name, []).append(group)
    return found


def remove_sandboxes_under(parent: str) -> None:
    """Found through the cgroup file system, not by listing the engine's containers (which waits on
    any container of the shared engine a frozen sandbox keeps busy); thawed first: a frozen gVisor
    sandbox cannot answer the runtime's kill."""
    client = docker.from_env(timeout=60)
    for container_id, groups in _container_groups(parent).items():
        for group in groups:
            for control, thawed in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
                with contextlib.suppress(OSError):
                    (group / control).write_text(thawed)
        with contextlib.suppress(docker.errors.NotFound):
            client.api.remove_container(container_id, force=True)


def sandbox_pid_under(parent: str, timeout: float = 120) -> int:
    """The host pid of a sandbox whose cgroup is under `parent`, once one runs there."""
    client = docker.from_env(timeout=60)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for container_id in _container_groups(parent):
            with contextlib.suppress(docker.errors.NotFound):
                state = client.api.inspect_container(container_id)
                if "atelier.sandbox" in (state["Config"]["Labels"] or {}) and state["State"]["Pid"]:
                    return int(state["State"]["Pid"])
        time.sleep(0.5)
    raise AssertionError(f"no sandbox under {parent} within {timeout} s")


def cpu_cgroup_of(pid: int) -> str:
    """The cgroup whose CPU weight `pid` gets (v1: the cpu controller's; v2: the only one)."""
    lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            return path
    return lines[0].split(":", 2)[2]


def group_of(engine: Engine, parent: str) -> Path:
    return (CGROUP_ROOT / "cpu" if engine.version == 1 else CGROUP_ROOT) / parent.strip("/")


def weight_of(engine: Engine, parent: str) -> int:
    return int((group_of(engine, parent) / engine.control).read_text())
