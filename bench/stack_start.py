"""Stack start benchmark: what starting a test's stack (daphne, a Celery worker, beat, a Redis) costs.

    DATABASE_URL=postgres://... .venv/bin/python bench/stack_start.py [--rounds 4]

Each round starts a stack (`devstack.stack.stack_running`) on a database of the benchmark's own,
waits until daphne listens and the worker takes tasks, and stops it. Measured per stack: the wall
time to ready, and the CPU time of everything it started (the kernel's accounting of children).

Baseline, in the same run, rounds alternating: each stack collecting the static files itself, as
every stack did before they were collected once per process (`collected_static`). Writes
bench/results/stack_start.json.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from bench.measuring import machine_speed, report_opening, write_results  # noqa: E402 - beside this file
from devstack.databases import database_url, throwaway_database  # noqa: E402
from devstack.stack import collect_static, collected_static, stack_running  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "stack_start.json"
BENCH_DB_SUFFIX = "_bench_stack_start"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_stack(base: Path, *, shared_static: bool) -> dict[str, float]:
    base.mkdir()
    cpu_before, started = children_cpu(), time.perf_counter()
    overrides: dict[str, str] = {}
    if not shared_static:  # the baseline: this stack's own static files, collected for it
        collect_static(base / "static")
        overrides["STATIC_ROOT"] = str(base / "static")
    with stack_running(base, database_url=database_url(), env_overrides=overrides):
        ready = time.perf_counter() - started
    return {"seconds_to_ready": ready, "cpu_s": children_cpu() - cpu_before}


def summarize(samples: list[dict[str, float]]) -> dict[str, Any]:
    return {
        "stacks": len(samples),
        "median_seconds_to_ready": round(statistics.median(s["seconds_to_ready"] for s in samples), 2),
        "median_cpu_s_start_and_stop": round(statistics.median(s["cpu_s"] for s in samples), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    report = report_opening()
    collected_static()  # once per process: a session's first stack pays it, the others do not
    now: list[dict[str, float]] = []
    before: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-stack-start-") as tmp, throwaway_database(BENCH_DB_SUFFIX):
        for index in range(args.rounds):
            before.append(one_stack(Path(tmp) / f"before-{index}", shared_static=False))
            now.append(one_stack(Path(tmp) / f"now-{index}", shared_static=True))
    report["baseline_static_collected_per_stack"] = summarize(before)
    report["now"] = summarize(now)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
