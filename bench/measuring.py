"""Measuring helpers the benchmarks share: CPU accounting, percentiles, the machine's speed, and
what their stacks change from devstack's environment (`BENCH_ENV`)."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: Django is set up only by then
    from sandboxes.cpu_priority import Tier

# What a benchmark's stack changes from devstack's environment (made for tests): heartbeats as
# deployed, every 5 s rather than every second (their writes would count in what is measured),
# and warnings only in the logs.
BENCH_ENV = {"RUN_HEARTBEAT_SECONDS": "5", "LOG_LEVEL": "WARNING"}


def deployed_knobs() -> dict[str, str]:
    """Every knob devstack sets for tests (`devstack.stack.PROCESS_ENV`: how often a watcher's access is
    asked again, an idle stream polls, the reaper and the host beats run...) at the value a deployment
    gets: the setting as this process reads it, whose own environment sets none of them. For a benchmark
    of what users wait for: at the tests' clocks, a hundred watchers ask for their access ten times as
    often as deployed, on the web tier being measured. Django must be set up."""
    from django.conf import settings

    from devstack.stack import PROCESS_ENV

    return {name: str(getattr(settings, name)) for name in PROCESS_ENV if hasattr(settings, name)}


def machine() -> dict[str, Any]:
    """What a result says of the machine it was measured on (never its name)."""
    import docker  # only the benchmarks that start sandboxes ask

    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "docker": docker.from_env().version().get("Version"),
    }


def report_opening(**fields: Any) -> dict[str, Any]:
    """The start of a result file: when, on what (cores, Python, kernel: never the machine's name), the
    benchmark's own `fields`, and the machine's speed before anything is measured."""
    from datetime import UTC, datetime

    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release()},
        **fields,
        "speed_before": machine_speed(),
    }


def machine_speed() -> float:
    """Seconds for a fixed pure-Python loop: these VMs share their hosts, and
    this tells runs measured on a slow moment from a slower platform."""
    started = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return round(time.perf_counter() - started, 3)


def machine_cpu_seconds() -> float:
    """CPU seconds every process of the machine has used since boot (all but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


class PhaseLoad:
    """How busy the machine was during one phase of a benchmark, recorded beside its figures: a
    latency measured while the cores were saturated says something else than one measured on a quiet
    machine."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._cpu = machine_cpu_seconds()

    def record(self) -> dict[str, float]:
        elapsed = max(time.monotonic() - self._started, 1e-6)
        busy = (machine_cpu_seconds() - self._cpu) / (elapsed * (os.cpu_count() or 1))
        one, five, _ = os.getloadavg()
        return {
            "cpu_busy_fraction": round(min(busy, 1.0), 2),
            "load_1m_at_end": round(one, 2),
            "load_5m_at_end": round(five, 2),
        }


@contextlib.contextmanager
def busy(processes: int, *, started_with: Sequence[str] = ()) -> Iterator[None]:
    """`processes` Python processes spinning for the block, as busy web processes or test workers would:
    in this process's cgroup at a normal process's weight, or as `started_with` starts them
    (`python -m devstack.background --`)."""
    spin = [*started_with, sys.executable, "-c", "while True: pass"]
    spinning = [subprocess.Popen(spin, cwd=Path(__file__).resolve().parent.parent) for _ in range(processes)]
    try:
        time.sleep(1.0)
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def wall_and_machine_cpu(work: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole machine: every process's, servers' included) of `work()`."""
    started, cpu = time.perf_counter(), machine_cpu_seconds()
    work()
    return time.perf_counter() - started, machine_cpu_seconds() - cpu


def medians_of_wall_and_cpu(samples: list[tuple[float, float]], *, digits: int = 2) -> dict[str, float]:
    """The medians of `wall_and_machine_cpu` samples."""
    return {
        "measured": len(samples),
        "median_seconds": round(statistics.median(s[0] for s in samples), digits),
        "median_machine_cpu_seconds": round(statistics.median(s[1] for s in samples), digits),
    }


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def summary(samples_ms: list[float]) -> dict[str, float]:
    if not samples_ms:
        return {"events": 0}
    return {
        "events": len(samples_ms),
        "p50_ms": round(statistics.median(samples_ms), 2),
        "p99_ms": round(percentile(samples_ms, 0.99), 2),
        "max_ms": round(max(samples_ms), 2),
    }


def _sandbox_cpuacct() -> list[tuple[Path, ...]]:
    """Where the sandboxes' CPU is accounted (cgroup v1): each tier's parent group (the agents'
    SANDBOX_CGROUP_PARENT, the previews' SANDBOX_OFFLINE_CGROUP_PARENT), else Docker's when a
    setting is empty (counted once); absent: not reported."""
    from sandboxes.cpu_priority import TIERS, configured

    groups = dict.fromkeys((configured(tier) or "/docker").strip("/") for tier in TIERS)
    hierarchies = ("cpuacct", "cpu,cpuacct")
    return [tuple(Path(f"/sys/fs/cgroup/{h}/{group}/cpuacct.usage") for h in hierarchies) for group in groups]


def cpu_snapshot(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds used so far: the whole machine, some processes, Docker's containers."""
    ticks = os.sysconf("SC_CLK_TCK")
    snapshot = {"machine": machine_cpu_seconds()}
    for name, pid in pids.items():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        snapshot[name] = (int(stat[11]) + int(stat[12])) / ticks  # utime + stime
    for places in _sandbox_cpuacct():
        for path in places:
            if path.exists():
                snapshot["sandboxes"] = snapshot.get("sandboxes", 0.0) + int(path.read_text()) / 1e9
                break
    return snapshot


def cpu_per_run(before: dict[str, float], after: dict[str, float], runs: int) -> dict[str, Any]:
    per_run: dict[str, Any] = {f"{k}_s": round((after[k] - before[k]) / runs, 3) for k in before if k in after}
    return {**per_run, "note": "CPU seconds per run during the phase; machine = every process, both cores"}


def sandbox_priority(cgroup_parent: str, tier: Tier | None = None) -> dict[str, Any]:
    """The CPU priority of the sandboxes about to be measured (the agents', unless another tier is
    given), printed and for the results: their parent cgroup and its weight, or none (their worker
    prepared it as it started)."""
    from sandboxes.cpu_priority import AGENTS, current_engine, inspect_sandbox_cgroup

    engine = current_engine()
    if engine is None:
        raise SystemExit("Docker does not answer: no sandbox can be measured.")
    status = inspect_sandbox_cgroup(cgroup_parent, engine, tier=tier or AGENTS)
    print(f"measuring with: {status.summary()}", flush=True)
    return status.record()


def write_results(path: Path, report: dict[str, Any]) -> None:
    """A benchmark's report, kept under bench/results/ and printed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"wrote {path}")
