"""Inner loop benchmark: how long `make test-fast` takes, as it spreads its tests over workers.

    .venv/bin/python bench/test_fast.py [--rounds 2]

Now: `make test-fast` as it is, a worker more than the machine has cores, idle workers taking the
tests queued for busy ones (`--dist worksteal`). Baseline, in the same run, rounds alternating: one
worker per core, the tests handed out in turn (`--dist load`), as it ran before. Both run the same
tests on the same code, so the S3 server the storage tests share starts early in both: the baseline
shows what the spreading alone gains. Per round: the wall time, the whole machine's CPU-seconds busy
and idle (PostgreSQL and every process the tests start included), and the tests that passed; a
round that fails stops the benchmark. Writes bench/results/test_fast.json.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.measuring import machine_cpu_seconds, machine_speed, report_opening, write_results  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "test_fast.json"
CORES = os.cpu_count() or 1
BASELINE = [f"TEST_WORKERS={CORES}", "PYTEST_ARGS=--dist load"]


def one_round(make_arguments: list[str]) -> dict[str, Any]:
    cpu_before = machine_cpu_seconds()
    started = time.monotonic()
    done = subprocess.run(
        ["make", "--no-print-directory", "test-fast", *make_arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={key: value for key, value in os.environ.items() if key != "TEST_WORKERS"},
    )
    wall = time.monotonic() - started
    busy = machine_cpu_seconds() - cpu_before
    if done.returncode != 0:
        failures = "\n".join(line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR")))
        told = failures or done.stdout[-3000:]
        sys.exit(f"make test-fast {' '.join(make_arguments)} failed:\n{told}\n{done.stderr[-2000:]}")
    passed = re.search(r"(\d+) passed", done.stdout)
    return {
        "wall_s": round(wall, 1),
        "machine_busy_cpu_s": round(busy, 1),
        "machine_idle_cpu_s": round(wall * CORES - busy, 1),
        "passed": int(passed.group(1)) if passed else 0,
    }


def medians(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        **{key: round(statistics.median(r[key] for r in rounds), 1) for key in rounds[0] if key != "passed"},
        "rounds": rounds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    report = report_opening(cores=CORES)
    now: list[dict[str, Any]] = []
    before: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        now.append(one_round([]))
        print("now", now[-1], flush=True)
        before.append(one_round(BASELINE))
        print("baseline", before[-1], flush=True)
    report["now_a_worker_more_than_the_cores_worksteal"] = medians(now)
    report["baseline_a_worker_per_core_load"] = medians(before)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
