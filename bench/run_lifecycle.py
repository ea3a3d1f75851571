"""Run lifecycle benchmark: what one run's sandbox costs the machine, phase by phase, and how many such
lifecycles two cores finish a minute with no platform around them.

    DJANGO_SETTINGS_MODULE=config.test_settings .venv/bin/python bench/run_lifecycle.py [--rounds N] [--skip-ceiling]

A run's sandbox, as the worker drives it: started (until its shell answers), 19 commands, its output
copied out, its /testbed kept as a snapshot for a refine, removed. Each phase's CPU is the whole
machine's (dockerd, containerd, runsc and the sandbox's gVisor kernel included), median of N
sequential lifecycles on an otherwise quiet machine. Commands come two ways: each starting a process
(`ls`, as real commands do) and shell builtins only.

The baseline measured in the same run: one `docker exec true`, the floor of any exec, which the
copy-out and the snapshot each pay.

Other versions of the sandbox programs compare by running this file in a checkout that has them.

The ceiling: lifecycles a minute (start, 19 commands, copy-out, snapshot, removal) on 1, 4 and 8
threads at once, with no worker, database or model: what bench/stream.py's runs a minute, which
include all of those, can at best approach on this machine.

Writes bench/results/run_lifecycle.json.
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from bench.measuring import machine_cpu_seconds, machine_speed, report_opening, write_results  # noqa: E402
from sandboxes.docker_runtime import DockerSandbox, start_sandbox  # noqa: E402

LABELS = {"atelier.bench": "run-lifecycle"}
STEPS = 19  # and the submit: bench/stream.py's 20-step runs
COMMANDS = {"process": "echo step; ls /testbed > /dev/null", "builtins": "echo step"}
SNAPSHOT_LIMIT = 256 * 1024 * 1024
THREADS = (1, 4, 8)


def _ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 1)


def _copy_out(box: DockerSandbox) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        box.copy_out(Path(tmp) / "out")


def _snapshot(box: DockerSandbox) -> None:
    if box.save_snapshot(io.BytesIO(), max_bytes=SNAPSHOT_LIMIT) is None:
        sys.exit("the snapshot kept nothing")


def phases(rounds: int) -> dict[str, Any]:
    """Machine CPU (ms) and wall (ms) of each phase, medians of `rounds` sequential lifecycles."""
    cpu: dict[str, list[float]] = {}
    wall: dict[str, list[float]] = {}

    def measured(name: str, work: Callable[[], object]) -> Any:
        started, used = time.perf_counter(), machine_cpu_seconds()
        outcome = work()
        cpu.setdefault(name, []).append(machine_cpu_seconds() - used)
        wall.setdefault(name, []).append(time.perf_counter() - started)
        return outcome

    for _ in range(rounds):
        box = measured(START, _started)
        try:
            _one_lifecycle_in_phases(box, measured)
        finally:
            box.stop()  # removed once: measured as its phase, or after a phase failed
        time.sleep(0.5)  # let the engine finish the removal before the next start is measured
    return {name: {"machine_cpu_ms": _ms(cpu[name]), "wall_ms": _ms(wall[name]), "rounds": rounds} for name in cpu}


START = "start_until_the_shell_answers"
TWO_FILES = "printf '<svg/>' > /testbed/output/poster.svg; echo notes > /testbed/output/notes.md"


def _one_lifecycle_in_phases(box: DockerSandbox, measured: Callable[[str, Callable[[], object]], Any]) -> None:
    for kind, command in COMMANDS.items():
        measured(f"{STEPS}_commands_{kind}", functools.partial(_commands, box, command))
    measured("docker_exec_true_baseline", lambda: box.exec(["true"]))
    measured("copy_out_empty_output", lambda: _copy_out(box))
    box.run_command(TWO_FILES, timeout=30)
    measured("copy_out_two_files", lambda: _copy_out(box))
    measured("snapshot", lambda: _snapshot(box))
    measured("remove", box.stop)


def _started() -> DockerSandbox:
    box = start_sandbox(LABELS)
    box.run_command("true", timeout=30)
    return box


def _commands(box: DockerSandbox, command: str) -> None:
    for _ in range(STEPS):
        box.run_command(command, timeout=30)


def lifecycle(command: str) -> None:
    box = _started()
    try:
        _commands(box, command)
        _copy_out(box)
        _snapshot(box)
    finally:
        box.stop()


def ceiling(command: str, threads: int, each: int) -> dict[str, float]:
    """Lifecycles a minute with `threads` at once, each running `each` one after another."""
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(each):
                lifecycle(command)
        except BaseException as error:  # reported below, after the other threads end
            errors.append(error)

    started, cpu = time.perf_counter(), machine_cpu_seconds()
    running = [threading.Thread(target=work) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    if errors:
        raise errors[0]
    seconds = time.perf_counter() - started
    done = threads * each
    return {
        "lifecycles": done,
        "seconds": round(seconds, 1),
        "per_minute": round(done / seconds * 60, 1),
        "machine_cpu_s_each": round((machine_cpu_seconds() - cpu) / done, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--skip-ceiling", action="store_true", help="the phases only")
    args = parser.parse_args()
    from django.conf import settings

    report = report_opening(runtime=settings.SANDBOX_RUNTIME)
    report["phases"] = phases(args.rounds)
    for name, figures in report["phases"].items():
        print(f"{name:42s} {figures['machine_cpu_ms']:8.1f} ms CPU {figures['wall_ms']:8.1f} ms wall", flush=True)
    report["ceiling_lifecycles_per_minute"] = {}
    for kind, command in [] if args.skip_ceiling else COMMANDS.items():
        for threads in THREADS:
            figures = ceiling(command, threads, each=max(2, 12 // threads))
            report["ceiling_lifecycles_per_minute"][f"{kind}_{threads}_at_once"] = figures
            print(f"ceiling, {kind}, {threads} at once: {figures}", flush=True)
    report["speed_after"] = machine_speed()
    write_results(ROOT / "bench" / "results" / "run_lifecycle.json", report)


if __name__ == "__main__":
    main()
