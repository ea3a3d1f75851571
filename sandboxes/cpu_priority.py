"""Sandboxes under parent cgroups of their own CPU weight, so busy runs leave the live stream its CPU.

A CPU weight only competes among siblings. Left to Docker, every sandbox sits in
Docker's own parent group (`/docker`, or `system.slice` under systemd), which as
a whole weighs as much as each process of the host: with fifty busy runs on two
cores the web process, Redis and the worker's event path wait for a core (bench/stream.py
compares: event stored -> websocket p99 from a few hundred ms to seconds). Under a
parent with an eighth of the normal weight the sandboxes still use every idle cycle
but yield at once to the live stream (p99 tens of ms).

One status, shared by the worker's start (sandboxes/worker_start.py), `manage.py
sandbox_doctor` and bench/stream.py: `inspect_sandbox_cgroup` only reads,
`prepare_sandbox_cgroup` also creates the group and lowers its weight.

- Docker's cgroupfs driver: the group is a directory of the host's cgroup file
  system, which the worker creates and weighs (cgroup v1 `cpu.shares`, v2
  `cpu.weight`) when it may write there (root, the host's /sys/fs/cgroup).
- Docker's systemd driver: the parent must be a slice (`/atelier-sandboxes`
  becomes `atelier-sandboxes.slice`, which systemd nests in `atelier.slice`: the
  top slice is the one that competes with the host's other work). systemd owns
  that tree and writes its own weight back whenever it applies the slice's
  settings, so the worker only checks, and the fix is a `systemctl` command.

The platform's own sandboxes (previews and comparisons of agents' files,
sandboxes/offline.py) have a group of their own, SANDBOX_OFFLINE_CGROUP_PARENT, at
half a process's weight: four times the agents' group, below each process of the
web tier. They are short and bounded (PREVIEW_TIMEOUT per tool, PREVIEW_RUN_SECONDS
per run), and a run waits on them before it ends: in the agents' group, with two
test workers busy beside it, an HTML screenshot took 14-22 s instead of 5 in
Docker's default parent, and its test 21-31 s (past the tool's 30 s, now and then);
at half a process's weight that test took 11-12 s, at a full process's 11.

Whatever the outcome, sandboxes start: without the group's weight they run at
normal priority.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors

from sandboxes.per_process import per_process

logger = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
# An eighth of the default weight (cgroup v1 cpu.shares 1024, v2 cpu.weight 100).
LOW_CPU_SHARES = 128
LOW_CPU_WEIGHT = 12


@dataclass(frozen=True)
class Tier:
    """Whose sandboxes a parent group holds, the setting that names it and the weight it gets."""

    who: str  # as a sentence says it
    setting_name: str
    default: str
    shares: int  # cgroup v1 cpu.shares
    weight: int  # cgroup v2 cpu.weight
    priority: str  # what the weight means, said to an operator

    def weight_under(self, version: int) -> int:
        return self.shares if version == 1 else self.weight


AGENTS = Tier("sandboxes", "SANDBOX_CGROUP_PARENT", "/atelier-sandboxes", LOW_CPU_SHARES, LOW_CPU_WEIGHT, "low")
# Its default is one word: under Docker's systemd driver a dash nests the slice in atelier.slice, whose
# weight is the agents' group's (docker_cgroup_parent).
OFFLINE = Tier(
    "previews and comparisons", "SANDBOX_OFFLINE_CGROUP_PARENT", "/atelier_offline", 512, 50, "half a process's"
)


class State(enum.Enum):
    OFF = "off"  # SANDBOX_CGROUP_PARENT is empty: Docker's default parent
    PREPARED = "prepared"  # created, or its weight lowered, just now
    FINE = "fine"  # already there with a low weight
    MISSING = "missing"
    TOO_HEAVY = "weight too high"
    UNSEEN = "not visible here"  # no cpu controller where this process looks: it cannot tell


@dataclass(frozen=True)
class Engine:
    """What of the Docker engine decides where sandboxes' cgroups are: its driver and cgroup version."""

    driver: str  # "cgroupfs" or "systemd"
    version: int  # 1 or 2

    @classmethod
    def from_info(cls, info: Mapping[str, Any], *, root: Path = CGROUP_ROOT) -> Engine:
        """From `docker info` (older engines do not report the version: read from the file system)."""
        driver = str(info.get("CgroupDriver") or "cgroupfs")
        reported = str(info.get("CgroupVersion") or "")
        version = int(reported) if reported in {"1", "2"} else 2 if (root / "cgroup.controllers").exists() else 1
        return cls(driver=driver, version=version)

    @property
    def control(self) -> str:
        return "cpu.shares" if self.version == 1 else "cpu.weight"

    @property
    def low_weight(self) -> int:
        """The agents' group's weight under this engine's cgroup version."""
        return AGENTS.weight_under(self.version)

    def describe(self) -> str:
        return f"cgroup v{self.version}, Docker's {self.driver} driver"


TIERS = (AGENTS, OFFLINE)


def configured(tier: Tier) -> str:
    """The tier's parent group as this process's settings name it."""
    from django.conf import settings

    return str(getattr(settings, tier.setting_name))


@dataclass(frozen=True)
class CpuPriority:
    """Where the sandboxes' parent cgroup stands; `line()` says it to an operator."""

    state: State
    parent: str  # as Docker is given it ("" when off)
    engine: Engine | None = None
    tier: Tier = AGENTS
    group: Path | None = None  # the directory whose weight competes with the host's other work
    weight: int | None = None  # found there (after preparing)
    why: str = ""  # what is wrong, or what was done
    fix: str = ""

    @property
    def ok(self) -> bool:
        return self.state in {State.PREPARED, State.FINE}

    def summary(self) -> str:
        """How it stands, in one sentence (`line()` adds the fix when it is not fine)."""
        lag = "under load, live streams lag behind busy runs"
        who, tier = self.tier.who, self.tier
        if self.state is State.OFF:
            return f"{who} run at NORMAL CPU priority ({tier.setting_name} is empty): {lag}"
        assert self.engine is not None
        where = f"cgroup {self.parent} ({self.engine.describe()})"
        if self.ok:
            found = f"{self.engine.control} {self.weight} in {self.group}" + (f" ({self.why})" if self.why else "")
            return f"{who} run at {tier.priority} CPU priority: {where}: {found}"
        return f"{who} run at NORMAL CPU priority: {where}: {self.why}; {lag}"

    def line(self) -> str:
        return self.summary() if self.ok else f"{self.summary()}. Fix: {self.fix}"

    def record(self) -> dict[str, Any]:
        """What a benchmark notes about the sandboxes it measured."""
        if self.state is State.OFF:
            return {"cgroup_parent": "none", "state": self.state.value}
        assert self.engine is not None
        return {
            "cgroup_parent": self.parent,
            "state": self.state.value,
            "weight": self.weight,
            "control": self.engine.control,
            "cgroup_version": self.engine.version,
            "cgroup_driver": self.engine.driver,
        }


def docker_cgroup_parent(setting: str, driver: str) -> str:
    """SANDBOX_CGROUP_PARENT as Docker's driver wants it: a path for cgroupfs, a slice for systemd
    (Docker refuses a path there, so a path is made the slice systemd would name: /a/b -> a-b.slice)."""
    name = setting.strip().strip("/")
    if not name:
        return ""
    if driver != "systemd":
        return f"/{name}"
    return name if name.endswith(".slice") else "-".join(name.split("/")) + ".slice"


def _cpu_hierarchy(engine: Engine, root: Path) -> Path:
    """Where the cpu controller's groups are: v1 its own hierarchy, v2 the one tree."""
    return root / "cpu" if engine.version == 1 else root


def _weighed_group(parent: str, engine: Engine, root: Path) -> Path:
    base = _cpu_hierarchy(engine, root)
    if engine.driver == "systemd":  # a-b.slice lives in a.slice, which competes with system.slice
        return base / (parent.split("-", 1)[0].removesuffix(".slice") + ".slice")
    return base / parent.strip("/")


def _fix(engine: Engine, group: Path, tier: Tier) -> str:
    target = tier.weight_under(engine.version)
    if engine.driver == "systemd":
        prop = f"CPUShares={target}" if engine.version == 1 else f"CPUWeight={target}"
        return f"on the Docker host, as root, once (it persists): systemctl set-property {group.name} {prop}"
    enable = "echo +cpu > /sys/fs/cgroup/cgroup.subtree_control && " if engine.version == 2 else ""
    return (
        "run the worker as root with the host's /sys/fs/cgroup writable (it prepares the group as it "
        "starts; platform/README.md), or once as root on the Docker host: "
        f"{enable}mkdir -p {group} && echo {target} > {group}/{engine.control}"
    )


def _read_weight(group: Path, control: str) -> int | None:
    try:
        return int((group / control).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def inspect_sandbox_cgroup(
    setting: str, engine: Engine, *, tier: Tier = AGENTS, root: Path = CGROUP_ROOT
) -> CpuPriority:
    """Where a tier's parent group stands, without changing anything. A weight at most the tier's is
    fine (an operator may give them less); above it, they take CPU from what they should yield to."""
    parent = docker_cgroup_parent(setting, engine.driver)
    if not parent:
        return CpuPriority(State.OFF, "", tier=tier, fix=f"set {tier.setting_name}={tier.default} (its default)")
    group = _weighed_group(parent, engine, root)
    fix = _fix(engine, group, tier)
    target = tier.weight_under(engine.version)

    def status(state: State, weight: int | None = None, why: str = "", fix: str = fix) -> CpuPriority:
        return CpuPriority(state, parent, engine, tier, group, weight, why, fix)

    base = _cpu_hierarchy(engine, root)
    if not (base / ("cpu.shares" if engine.version == 1 else "cgroup.controllers")).exists():
        why = f"this process sees no cgroup cpu controller at {base}, so it cannot check or prepare {group}"
        return status(State.UNSEEN, why=why, fix=f"check on the Docker host; {fix}")
    weight = _read_weight(group, engine.control)
    if weight is None:
        why = f"{group} does not exist" if not group.is_dir() else f"{group}/{engine.control} cannot be read"
        return status(State.MISSING, why=why)
    if weight > target:
        return status(State.TOO_HEAVY, weight, f"{group} has {engine.control} {weight}, above {target}")
    return status(State.FINE, weight)


def prepare_sandbox_cgroup(
    setting: str, engine: Engine, *, tier: Tier = AGENTS, root: Path = CGROUP_ROOT
) -> CpuPriority:
    """The group made and weighed if it is missing or too heavy (cgroupfs driver), then its status."""
    found = inspect_sandbox_cgroup(setting, engine, tier=tier, root=root)
    if found.state in {State.OFF, State.FINE, State.UNSEEN} or engine.driver == "systemd" or found.group is None:
        return found  # under systemd the weight must come through systemd (module docstring)
    group, before = found.group, found.weight
    try:
        _make_group(root, group, engine)
        (group / engine.control).write_text(f"{tier.weight_under(engine.version)}\n")
    except OSError as exc:
        failed = exc.filename or group
        why = f"{found.why}, and {failed} cannot be written ({exc.strerror or exc})"
        return CpuPriority(found.state, found.parent, engine, tier, group, before, why, found.fix)
    after = inspect_sandbox_cgroup(setting, engine, tier=tier, root=root)
    if not after.ok:  # the kernel took the write but kept another value
        return after
    done = "created just now" if before is None else f"lowered from {before} just now"
    return CpuPriority(State.PREPARED, after.parent, engine, tier, group, after.weight, done, after.fix)


def _make_group(root: Path, group: Path, engine: Engine) -> None:
    """Each missing level of the group, under the cpu controller's hierarchy (inspect made sure it
    is one, not a tmpfs where it would be mounted); under cgroup v2 each level hands the cpu
    controller down, without which a group has no cpu.weight."""
    directory = base = _cpu_hierarchy(engine, root)
    for part in group.relative_to(base).parts:
        if engine.version == 2:
            control = directory / "cgroup.subtree_control"
            if "cpu" not in control.read_text().split():
                control.write_text("+cpu\n")
        directory = directory / part
        directory.mkdir(exist_ok=True)


# --- the engine, asked once per process -------------------------------------------------------


@per_process
def _engine_asked() -> Engine:
    client = docker.from_env(timeout=15)
    try:
        return Engine.from_info(client.info())
    finally:
        client.close()


def current_engine() -> Engine | None:
    """This host's engine (`docker info`), asked once per process; None while Docker does not answer."""
    try:
        return _engine_asked()
    except (docker.errors.DockerException, OSError) as exc:  # nothing kept: asked again next time
        logger.debug("Docker does not answer: %s", exc)
        return None


def sandbox_cgroup_parent(setting: str) -> str:
    """What sandboxes are created under (Docker's cgroup_parent) on this host."""
    engine = current_engine()
    return docker_cgroup_parent(setting, engine.driver if engine is not None else "cgroupfs")


def prepare_at_worker_start(setting: str, tier: Tier = AGENTS) -> CpuPriority | None:
    """Prepare a tier's group as a worker starts and say, in one line, how it stands. Never raises:
    a worker that cannot prepare it still runs its sandboxes, at normal priority."""
    try:
        engine = current_engine()
        if engine is None:
            logger.warning(
                "CPU priority of %s unknown: Docker does not answer, so their cgroup (%s=%s) was not checked."
                " Fix: start dockerd, then restart the worker.",
                tier.who,
                tier.setting_name,
                setting or "",
            )
            return None
        status = prepare_sandbox_cgroup(setting, engine, tier=tier)
    except Exception:  # a start-up check must never stop the worker
        logger.warning("CPU priority of %s not checked: they may run at normal priority", tier.who, exc_info=True)
        return None
    logger.log(logging.INFO if status.ok else logging.WARNING, "%s", status.line())
    return status
