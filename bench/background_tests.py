"""Background tests benchmark: what the fast tests beside the rest of `make test` cost its sandboxes.

    .venv/bin/python bench/background_tests.py [--rounds 5] [--busy 2]

`make test` runs the fast tests (two pytest workers, busy from start to end) beside the tests that
start sandboxes. Measured per sandbox, with `--busy` processes spinning beside it as those workers
do: a sandbox started in the agents' parent group (SANDBOX_CGROUP_PARENT, as every run's is), a
Python program of about a CPU-second run in it (an agent's plot or conversion), the sandbox
stopped; the wall time, and the CPU time the sandboxes' groups were charged for it.

Now: the spinning processes started as `make test` starts the fast tests, under
`python -m devstack.background` (a cgroup of half the sandboxes' weight).
Baseline, in the same run, rounds alternating: the spinning processes in this session's group, as
the fast tests ran before. Writes bench/results/background_tests.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from bench.measuring import (  # noqa: E402
    busy,
    cpu_snapshot,
    machine_speed,
    report_opening,
    sandbox_priority,
    write_results,
)
from sandboxes.docker_runtime import start_sandbox  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "background_tests.json"
LABELS = {"atelier.owner": "bench", "atelier.bench": "background-tests"}
WORK = "python3 -c 'sum(i * i for i in range(6_000_000))' && echo done"
IN_BACKGROUND = [sys.executable, "-m", "devstack.background", "--"]


def one_sandbox() -> dict[str, float]:
    before = cpu_snapshot({})
    started = time.perf_counter()
    box = start_sandbox(LABELS)
    try:
        result = box.run_command(WORK, timeout=300)
    finally:
        box.stop()
    seconds = time.perf_counter() - started
    after = cpu_snapshot({})
    assert "done" in result.output, result.output
    return {"seconds": seconds, "sandbox_cpu_s": after.get("sandboxes", 0.0) - before.get("sandboxes", 0.0)}


def summarize(samples: list[dict[str, float]]) -> dict[str, Any]:
    return {
        "sandboxes": len(samples),
        "median_seconds": round(statistics.median(s["seconds"] for s in samples), 2),
        "seconds_each": [round(s["seconds"], 2) for s in samples],
        "median_sandbox_cpu_s": round(statistics.median(s["sandbox_cpu_s"] for s in samples), 2),
        "sandbox_cpu_s_each": [round(s["sandbox_cpu_s"], 2) for s in samples],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--busy", type=int, default=2, help="processes spinning beside the sandbox")
    args = parser.parse_args()
    report = report_opening(busy_processes=args.busy)
    report["cpu_priority"] = sandbox_priority(settings.SANDBOX_CGROUP_PARENT)
    one_sandbox()  # the image's files in the page cache before anything is measured
    quiet: list[dict[str, float]] = []
    before: list[dict[str, float]] = []
    now: list[dict[str, float]] = []
    for _ in range(args.rounds):
        quiet.append(one_sandbox())
        with busy(args.busy):
            before.append(one_sandbox())
        with busy(args.busy, started_with=IN_BACKGROUND):
            now.append(one_sandbox())
    report["idle_machine"] = summarize(quiet)
    report["baseline_busy_in_the_session_group"] = summarize(before)
    report["now_busy_in_the_background_group"] = summarize(now)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
