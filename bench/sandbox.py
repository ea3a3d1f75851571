"""Sandbox benchmark: cold start, warm acquire, execute_bash round trips, 10 MB
copy in/out, and the baseline of one `docker exec` per command (how the
reference LLM-in-Sandbox agent runs commands), all in the same run; what
an idle sandbox costs between commands, frozen and running; and commands
after a pause (as between agent steps, while the model thinks), with and
without the CPU burst (SANDBOX_CPU_BURST), in two sandboxes taking turns; and
`true` after pauses from none to 200 ms, under gVisor and under runc (the
baseline: what the same command costs without gVisor).

    DJANGO_SETTINGS_MODULE=config.test_settings .venv/bin/python bench/sandbox.py [--rounds N]

Prints median and p90 (milliseconds) and writes bench/results/sandbox.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django
import docker

django.setup()

from django.conf import settings  # noqa: E402

from sandboxes.container_cgroup import container_cgroups  # noqa: E402
from sandboxes.docker_runtime import DockerSandbox, SandboxConfig, start_sandbox  # noqa: E402
from sandboxes.pool import WarmPool  # noqa: E402

LABELS = {"atelier.owner": "bench", "atelier.run_id": "bench"}


def latency_figures(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p90_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))], 2),
        "rounds": len(ordered),
    }


def measure(action: Callable[[], object], rounds: int) -> dict[str, float]:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return latency_figures(samples)


def machine_cpu_seconds() -> float:
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait


def idle_cpu(sandboxes: int, seconds: float) -> dict[str, float]:
    """CPU per idle sandbox (ms per second) as the model thinks between commands:
    frozen (SANDBOX_FREEZE_IDLE) and left running, against the machine with none."""

    def cpu_per_second() -> float:
        before = machine_cpu_seconds()
        time.sleep(seconds)
        return (machine_cpu_seconds() - before) / seconds

    machine = cpu_per_second()

    def idle_sandboxes(freeze: bool) -> float:
        config = dataclasses.replace(SandboxConfig.from_settings(), freeze_idle=freeze)
        boxes = [start_sandbox(LABELS, config=config) for _ in range(sandboxes)]
        try:
            for box in boxes:
                box.run_command("true", timeout=30)  # idle after a command, as between agent steps
            if freeze and not all(box.frozen for box in boxes):
                sys.exit("sandboxes are not frozen: run as root with SANDBOX_FREEZE_IDLE=true")
            return cpu_per_second()
        finally:
            for box in boxes:
                box.stop()

    frozen = idle_sandboxes(freeze=True)
    running = idle_sandboxes(freeze=False)
    return {
        "sandboxes": sandboxes,
        "machine_without_sandboxes_ms_per_s": round(machine * 1000, 1),
        "running_ms_per_s": round((running - machine) / sandboxes * 1000, 1),
        "frozen_ms_per_s": round((frozen - machine) / sandboxes * 1000, 1),
    }


def _throttled_ms(box: DockerSandbox) -> float:
    """How long the kernel has held the sandbox's cgroup to its CPU quota so far."""
    pid = int(docker.from_env().api.inspect_container(box.id)["State"]["Pid"])
    groups = container_cgroups(pid, box.id, "cpu")
    if not groups:
        sys.exit("the sandboxes' cgroups are not readable here: run as root on the Docker host")
    stat = dict(line.split() for line in (groups[0].directory / "cpu.stat").read_text().splitlines())
    return int(stat["throttled_time"]) / 1e6 if "throttled_time" in stat else int(stat["throttled_usec"]) / 1e3


# A builtin (what waking the sandbox costs), one process, and four at once (a pipeline).
PAUSED_COMMANDS = {"true": "true", "python3": "python3 -c pass", "pipeline": "ls /usr/bin | sort | head -3 | wc -l"}


def after_a_pause(rounds: int, pause: float = 0.2) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """PAUSED_COMMANDS each after a pause, in a sandbox with the CPU burst and one without,
    taking turns so both see the same machine; and how long (ms) each group was throttled."""
    boxes = {
        burst: start_sandbox(LABELS, config=dataclasses.replace(SandboxConfig.from_settings(), cpu_burst=burst))
        for burst in (True, False)
    }
    samples: dict[str, list[float]] = {}
    try:
        before = {burst: _throttled_ms(box) for burst, box in boxes.items()}
        for _ in range(rounds):
            for kind, command in PAUSED_COMMANDS.items():
                for burst, box in boxes.items():
                    time.sleep(pause)
                    started = time.perf_counter()
                    box.run_command(command, timeout=30)
                    name = f"{kind}_after_a_pause_{'with' if burst else 'without'}_cpu_burst"
                    samples.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        throttled = {burst: _throttled_ms(box) - before[burst] for burst, box in boxes.items()}
    finally:
        for box in boxes.values():
            box.stop()
    results = {name: latency_figures(values) for name, values in samples.items()}
    return results, {"with_cpu_burst": round(throttled[True], 1), "without": round(throttled[False], 1)}


# Pauses (ms) before a `true`: as between agent steps, from back to back to a model's thinking.
WAKE_PAUSES_MS = (0, 1, 2, 5, 10, 20, 50, 200)


def wake_after_a_pause(rounds: int) -> dict[str, dict[str, float]]:
    """`true` after each of WAKE_PAUSES_MS of idleness, under gVisor and, as the baseline in the same run,
    under runc (no isolation; never what a run gets): p50 ms by runtime and pause."""
    figures: dict[str, dict[str, float]] = {}
    for runtime in ("runsc", "runc"):
        box = start_sandbox(LABELS, config=dataclasses.replace(SandboxConfig.from_settings(), runtime=runtime))
        try:
            box.run_command("true", timeout=30)
            for pause_ms in WAKE_PAUSES_MS:
                samples = []
                for _ in range(rounds):
                    time.sleep(pause_ms / 1000)
                    started = time.perf_counter()
                    box.run_command("true", timeout=30)
                    samples.append((time.perf_counter() - started) * 1000)
                figures.setdefault(runtime, {})[f"{pause_ms}ms"] = round(statistics.median(samples), 2)
        finally:
            box.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    rounds = args.rounds
    results: dict[str, dict[str, float]] = {}

    def cold() -> None:
        start_sandbox(LABELS).stop()

    results["cold_start"] = measure(cold, max(5, rounds // 3))

    pool = WarmPool(2, max_age=3600)
    try:
        pool.wait_until_full()
        acquired = []

        def warm() -> None:
            pool.wait_until_full()  # measure a hand-out from a full pool, as in steady state
            started = time.perf_counter()
            acquired.append(pool.acquire(labels=LABELS))
            warm_samples.append((time.perf_counter() - started) * 1000)

        warm_samples: list[float] = []
        for _ in range(max(5, rounds // 3)):
            warm()
            pool.release(acquired.pop())
        results["warm_acquire"] = latency_figures(warm_samples)
    finally:
        pool.shutdown()

    box = start_sandbox(LABELS)
    try:
        box.run_command("true", timeout=30)
        results["execute_bash_true"] = measure(lambda: box.run_command("true", timeout=30), rounds * 3)
        results["execute_bash_python3_pass"] = measure(lambda: box.run_command("python3 -c pass", timeout=30), rounds)
        results["baseline_docker_exec_true"] = measure(lambda: box.exec(["bash", "-lc", "true"]), rounds)
        results["baseline_docker_exec_python3_pass"] = measure(
            lambda: box.exec(["bash", "-lc", "python3 -c pass"]), rounds
        )
        payload = os.urandom(10 * 1024 * 1024)
        results["copy_in_10mb"] = measure(lambda: box.write_files({"blob.bin": payload}), max(5, rounds // 3))
        box.run_command("cp /testbed/input/blob.bin /testbed/output/blob.bin", timeout=60)
        with tempfile.TemporaryDirectory() as tmp:
            results["copy_out_10mb"] = measure(lambda: box.copy_out(Path(tmp) / "out"), max(5, rounds // 3))
    finally:
        box.stop()

    paused, throttled = after_a_pause(rounds)
    results.update(paused)
    wake = wake_after_a_pause(max(15, rounds // 2))
    idle = idle_cpu(sandboxes=8, seconds=5.0)

    speedup = results["baseline_docker_exec_true"]["p50_ms"] / results["execute_bash_true"]["p50_ms"]
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "kernel": platform.release(),
        },
        "runtime": settings.SANDBOX_RUNTIME,
        "results": results,
        "idle_sandbox_cpu": idle,
        "throttled_ms_after_pauses": throttled,
        "true_p50_ms_after_a_pause_by_runtime": wake,
        "execute_bash_true_speedup_vs_docker_exec": round(speedup, 1),
    }
    for name, figures in results.items():
        print(f"{name:36} p50 {figures['p50_ms']:9.2f} ms   p90 {figures['p90_ms']:9.2f} ms   (n={figures['rounds']})")
    print(f"execute_bash `true` is {speedup:.0f}x faster than one docker exec per command")
    print(
        f"throttled by the CPU quota over the commands after a pause: {throttled['with_cpu_burst']} ms with"
        f" the CPU burst, {throttled['without']} ms without"
    )
    print(
        f"an idle sandbox costs {idle['running_ms_per_s']} ms of CPU per second running, "
        f"{idle['frozen_ms_per_s']} ms frozen between commands"
    )
    print("`true` after a pause, p50 ms:")
    for runtime, by_pause in wake.items():
        print(f"  {runtime:6} " + "  ".join(f"{pause} {ms:6.2f}" for pause, ms in by_pause.items()))
    out = Path(__file__).resolve().parent / "results" / "sandbox.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
