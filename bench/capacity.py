"""Capacity benchmark: what one sandbox costs a worker host, and how many runs a core finishes,
for the sizing table of platform/README.md.

    DJANGO_SETTINGS_MODULE=config.test_settings .venv/bin/python bench/capacity.py [--sandboxes 8] [--runs 24]

Measured on this machine, against a baseline taken in the same run (the machine with no sandbox):
- idle: N sandboxes after a command, as between agent steps while the model thinks: memory of
  each (what the machine's available memory drops by, and the sandbox's own cgroup), and CPU of
  each (its own cgroup; and the machine's, less the baseline), frozen between commands
  (SANDBOX_FREEZE_IDLE, the default) and left running;
- busy: a fresh sandbox for each kind of typical agent work (a matplotlib chart, a 5-second 720p
  video with ffmpeg, a Chromium screenshot of a page): its peak working set (sampled) and
  CPU-seconds;
- runs per core: 20-step scripted runs (bench/agent.py's mix: echo, a small python, a file
  write) through the agent loop, a cold-started sandbox each, 4 at once per core as the worker
  runs them (WORKER_CONCURRENCY's default): runs finished per core and minute, and CPU-seconds
  per run of the sandboxes (their own cgroup), of the worker's part (this process) and of the
  whole machine (the engine too, and whatever else runs). The scripted model answers at once,
  so this is the CPU-bound ceiling; with a real model most of a run is waiting, and idle memory
  and CPU decide instead.

Prints the figures and writes bench/results/capacity.json.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import logging
import os
import platform
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

import docker  # noqa: E402
from django.conf import settings  # noqa: E402

from bench.agent import scripted_run  # noqa: E402 - beside this file
from bench.measuring import cpu_snapshot, machine_speed  # noqa: E402 - beside this file
from devstack.scripted_model import ScriptedModel  # noqa: E402
from sandboxes.agent import AgentLimits, model_client_for  # noqa: E402
from sandboxes.agent.one_shot import new_run_id, run_one_shot  # noqa: E402
from sandboxes.docker_runtime import DockerSandbox, SandboxConfig, start_sandbox  # noqa: E402
from sandboxes.pool import ColdStartProvider  # noqa: E402

LABELS = {"atelier.owner": "bench", "atelier.run_id": "bench"}
# The benchmark's sandboxes under a cgroup of their own (inside the low-weight parent, as deployed):
# their CPU is theirs alone, whatever other sandboxes this engine runs.
CGROUP = f"{settings.SANDBOX_CGROUP_PARENT.rstrip('/')}/capacity-bench-{os.getpid()}"
RESULTS = ROOT / "bench" / "results" / "capacity.json"
STEPS = 20
MIB = 1024 * 1024
BUSY_WORK = {
    "chart (matplotlib, 100k points, PNG at 150 dpi)": (
        'python3 -c "import numpy as np, matplotlib.pyplot as plt; x = np.linspace(0, 10, 100000);'
        " plt.plot(x, np.sin(x) * np.exp(-x / 5)); plt.savefig('/testbed/output/chart.png', dpi=150)\""
    ),
    "video (ffmpeg, 5 s of 1280x720 at 30 fps, H.264)": (
        "ffmpeg -loglevel error -f lavfi -i testsrc=duration=5:size=1280x720:rate=30 -pix_fmt yuv420p"
        " -y /testbed/output/clip.mp4"
    ),
    "page (Chromium screenshot, 1280x800)": (
        "printf '<h1>Tokyo food map</h1><p>%s</p>' \"$(seq 1 2000)\" > /tmp/page.html && chromium --headless"
        " --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir=/tmp/chromium --window-size=1280,800"
        " --screenshot=/testbed/output/page.png file:///tmp/page.html >/dev/null 2>&1"
    ),
}


def mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


class SandboxCgroup:
    """A sandbox's own memory and CPU accounting (cgroup v1 memory/cpuacct, or v2)."""

    def __init__(self, box: DockerSandbox) -> None:
        pid = int(docker.from_env().api.inspect_container(box.container_id)["State"]["Pid"])
        self.paths: dict[str, Path] = {}
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else ["unified"]:
                base = Path("/sys/fs/cgroup") / ("" if controller == "unified" else controller)
                self.paths[controller] = base / path.lstrip("/")
        self.v1 = "memory" in self.paths

    def _read(self, controller: str, name: str) -> str:
        return (self.paths[controller if self.v1 else "unified"] / name).read_text()

    def working_set(self) -> int:
        """Memory in use less the inactive file cache, as `docker stats` and Kubernetes count it."""
        stat = dict(line.split() for line in self._read("memory", "memory.stat").splitlines())
        if self.v1:
            return int(self._read("memory", "memory.usage_in_bytes")) - int(stat["total_inactive_file"])
        return int(self._read("memory", "memory.current")) - int(stat["inactive_file"])

    def peak(self) -> int:
        return int(self._read("memory", "memory.max_usage_in_bytes" if self.v1 else "memory.peak"))

    def cpu_seconds(self) -> float:
        if self.v1:
            return int(self._read("cpuacct", "cpuacct.usage")) / 1e9
        usage = dict(line.split() for line in self._read("cpu", "cpu.stat").splitlines())
        return int(usage["usage_usec"]) / 1e6


def bench_config(*, freeze: bool = True) -> SandboxConfig:
    return dataclasses.replace(SandboxConfig.from_settings(), freeze_idle=freeze, cgroup_parent=CGROUP)


def group_cpu_seconds() -> float:
    """CPU of every sandbox this benchmark started (cgroup v1 cpuacct, or v2)."""
    for path in (
        Path(f"/sys/fs/cgroup/cpuacct{CGROUP}/cpuacct.usage"),
        Path(f"/sys/fs/cgroup/cpu,cpuacct{CGROUP}/cpuacct.usage"),
    ):
        if path.exists():
            return int(path.read_text()) / 1e9
    stat = Path(f"/sys/fs/cgroup{CGROUP}/cpu.stat")
    return int(dict(line.split() for line in stat.read_text().splitlines())["usage_usec"]) / 1e6


def process_cpu_seconds() -> float:
    """This process: the agent loop, the model server, the Docker client (the worker's part)."""
    times = os.times()
    return times.user + times.system


def shim_mib(box: DockerSandbox) -> float:
    """The runtime's shim of a sandbox: a host process outside its cgroup."""
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and box.container_id in (proc / "cmdline").read_text():
                return rss_mib(proc)
        except OSError:
            continue
    return 0.0


def rss_mib(proc: Path = Path("/proc/self")) -> float:
    for line in (proc / "status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


class PeakWorkingSet:
    """Samples a sandbox's working set while it works (the cgroup's own high-water mark counts page cache)."""

    def __init__(self, cgroup: SandboxCgroup) -> None:
        self.cgroup, self.peak = cgroup, cgroup.working_set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            try:
                self.peak = max(self.peak, self.cgroup.working_set())
            except OSError:
                return

    def __enter__(self) -> PeakWorkingSet:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()
        self._thread.join()


def machine_cpu_per_second(seconds: float) -> float:
    before = cpu_snapshot({})["machine"]
    time.sleep(seconds)
    return (cpu_snapshot({})["machine"] - before) / seconds


def idle(count: int, seconds: float) -> dict[str, Any]:
    baseline_cpu = machine_cpu_per_second(seconds)

    def phase(freeze: bool) -> dict[str, float]:
        config = bench_config(freeze=freeze)
        available = mem_available()
        boxes = [start_sandbox(LABELS, config=config) for _ in range(count)]
        try:
            for box in boxes:
                box.run_command("true", timeout=60)  # idle after a command, as between agent steps
            if freeze and not all(box.frozen for box in boxes):
                sys.exit("sandboxes are not frozen: run as root with SANDBOX_FREEZE_IDLE=true")
            time.sleep(1.0)
            cgroups = [SandboxCgroup(box) for box in boxes]
            own_before = sum(cgroup.cpu_seconds() for cgroup in cgroups)
            machine = machine_cpu_per_second(seconds)
            own = (sum(cgroup.cpu_seconds() for cgroup in cgroups) - own_before) / seconds
            return {
                # The sandboxes' own cgroups: what they cost, whatever else the machine does.
                "cpu_ms_per_s": round(own / count * 1000, 1),
                "machine_cpu_ms_per_s": round((machine - baseline_cpu) / count * 1000, 1),
                "machine_memory_mib": round((available - mem_available()) / count / MIB, 1),
                "own_cgroup_mib": round(sum(cgroup.working_set() for cgroup in cgroups) / count / MIB, 1),
                "shim_mib": round(sum(shim_mib(box) for box in boxes) / count, 1),
            }
        finally:
            for box in boxes:
                box.stop()

    frozen, running = phase(freeze=True), phase(freeze=False)
    return {
        "sandboxes": count,
        "baseline_machine_cpu_ms_per_s": round(baseline_cpu * 1000, 1),
        "frozen": frozen,
        "running": running,
    }


def busy() -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, command in BUSY_WORK.items():
        box = start_sandbox(LABELS, config=bench_config())
        try:
            box.run_command("true", timeout=60)
            cgroup = SandboxCgroup(box)
            idle_set, cpu_before, started = cgroup.working_set(), cgroup.cpu_seconds(), time.monotonic()
            with PeakWorkingSet(cgroup) as peak:
                result = box.run_command(command, timeout=300)
            if result.exit_code != 0:
                raise RuntimeError(f"{name} failed: {result.output[-2000:]}")
            results[name] = {
                "cpu_s": round(cgroup.cpu_seconds() - cpu_before, 2),
                "wall_s": round(time.monotonic() - started, 2),
                "peak_working_set_mib": round(peak.peak / MIB, 1),
                "peak_with_page_cache_mib": round(cgroup.peak() / MIB, 1),
                "idle_before_mib": round(idle_set / MIB, 1),
            }
        finally:
            box.stop()
        print(f"busy {name}: {results[name]}", flush=True)
    return results


def runs_per_core(total: int) -> dict[str, Any]:
    cores = os.cpu_count() or 1
    at_once = 4 * cores
    script = scripted_run(STEPS)

    def answer(body: dict[str, Any]) -> Any:
        done = sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")
        return script[min(done, len(script) - 1)]

    server = ScriptedModel(exhausted=answer).start()
    provider = ColdStartProvider(start=functools.partial(start_sandbox, config=bench_config()))

    def one_run(_index: int) -> str:
        with tempfile.TemporaryDirectory() as output:
            result = run_one_shot(
                provider=provider,
                model=model_client_for(base_url=server.base_url, model=server.model, api_key="bench"),
                brief="Benchmark: run the scripted steps.",
                limits=AgentLimits(max_steps=STEPS, command_timeout=60),
                input_files={},
                output_dir=Path(output),
                emit=lambda _event: None,
                cancel=threading.Event(),
                run_id=new_run_id(),
            )
        return str(result.outcome.reason)

    try:
        one_run(0)  # warm: imports, the image in the page cache
        machine, sandboxes, worker = cpu_snapshot({})["machine"], group_cpu_seconds(), process_cpu_seconds()
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=at_once) as pool:
            reasons = list(pool.map(one_run, range(total)))
        elapsed = time.monotonic() - started
        machine = cpu_snapshot({})["machine"] - machine
        sandboxes, worker = group_cpu_seconds() - sandboxes, process_cpu_seconds() - worker
    finally:
        server.stop()
    per_minute = total / elapsed * 60
    return {
        "runs": total,
        "steps_per_run": STEPS,
        "at_once": at_once,
        "submitted": reasons.count("submitted"),
        "seconds": round(elapsed, 1),
        "runs_per_minute": round(per_minute, 1),
        "runs_per_core_minute": round(per_minute / cores, 1),
        # Theirs alone: the sandboxes' own cgroup, and this process as the worker's agent loop.
        "sandbox_cpu_s_per_run": round(sandboxes / total, 2),
        "worker_cpu_s_per_run": round(worker / total, 2),
        # Everything the machine did meanwhile: the engine (dockerd, containerd, shims), and anything else.
        "machine_cpu_s_per_run": round(machine / total, 2),
        "worker_process_rss_mib": rss_mib(),
    }


def timed(label: str, action: Callable[[], Any]) -> Any:
    started = time.monotonic()
    result = action()
    print(f"{label} done in {time.monotonic() - started:.0f} s", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sandboxes", type=int, default=8, help="idle sandboxes measured at once")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each idle CPU measurement")
    parser.add_argument("--runs", type=int, default=24, help="scripted runs for runs per core")
    args = parser.parse_args()
    logging.disable(logging.INFO)  # one line per model request otherwise
    speed_before = machine_speed()
    try:
        report: dict[str, Any] = {
            "idle_per_sandbox": timed("idle", lambda: idle(args.sandboxes, args.seconds)),
            "busy_per_sandbox": timed("busy", busy),
            "runs_per_core": timed("runs", lambda: runs_per_core(args.runs)),
        }
    finally:
        for group in Path("/sys/fs/cgroup").glob(f"*{CGROUP}"):  # the empty groups Docker made for ours
            with contextlib.suppress(OSError):
                group.rmdir()
    from django.conf import settings

    report["machine"] = {
        "cpus": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "runtime": settings.SANDBOX_RUNTIME,
        "sandbox_limits": {"memory": settings.SANDBOX_MEMORY, "cpus": settings.SANDBOX_CPUS},
        "python_loop_10m_s_before_and_after": [speed_before, machine_speed()],
    }
    report["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
