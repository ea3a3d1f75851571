"""Garbage collection pause benchmark: how long a full collection stops a web process and a worker.

    .venv/bin/python bench/gc_pause.py [--rounds 5]

Each round starts a fresh Python that loads what the process serves from, as it does in production:
the web process (daphne) imports the ASGI application, which loads the URLconf and freezes what the
start made (config/startup_objects.py); the worker sets Django up, loads every task module and warms
up as its `worker_ready` receiver does (the model client library, then the freeze).

In the same process, the baseline: the frozen objects are put back (`gc.unfreeze()`), as every
process kept them before, and full collections (`gc.collect()`) are timed; then they are frozen
again and the same collections are timed. A full collection holds the GIL throughout, so every
thread of the process (daphne's event loop, a worker's runs and their announcements) waits for it.
Writes bench/results/gc_pause.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.measuring import machine_speed, report_opening, write_results  # noqa: E402 - beside this file

RESULTS = ROOT / "bench" / "results" / "gc_pause.json"
COLLECTIONS = 5

# Both programs print one JSON line: the tracked objects and the full collections' pauses (ms),
# with the start's objects in the collector's reach (as before) and frozen (now).
TIMING = """
import gc, json, time
from config.startup_objects import freeze_startup_objects

def pauses():
    timed = []
    for _ in range({collections}):
        started = time.perf_counter()
        gc.collect()
        timed.append((time.perf_counter() - started) * 1000)
    return timed

frozen_at_start = gc.get_freeze_count()
gc.unfreeze()
tracked_before = len(gc.get_objects())
before = pauses()
freeze_startup_objects()
print(json.dumps({{"frozen_at_start": frozen_at_start, "tracked_before": tracked_before,
    "tracked_now": len(gc.get_objects()), "before_ms": before, "now_ms": pauses()}}))
"""
WEB_PROCESS = """
import django
django.setup()
import config.asgi
""" + TIMING.format(collections=COLLECTIONS)
WORKER_PROCESS = """
import django
django.setup()
from config.celery import app
app.loader.import_default_modules()
from creations.runs.tasks import warm_up_for_runs
warm_up_for_runs()
""" + TIMING.format(collections=COLLECTIONS)


def one_process(program: str) -> dict[str, Any]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "true"}
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, env=env, check=True, timeout=120, capture_output=True, text=True
    )
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def summarize(samples: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "processes": len(samples),
        "frozen_at_start": statistics.median(s["frozen_at_start"] for s in samples),
        "tracked_objects_before": statistics.median(s["tracked_before"] for s in samples),
        "tracked_objects_now": statistics.median(s["tracked_now"] for s in samples),
        "full_collection_before_ms": _pause_summary([ms for s in samples for ms in s["before_ms"]]),
        "full_collection_now_ms": _pause_summary([ms for s in samples for ms in s["now_ms"]]),
    }


def _pause_summary(samples_ms: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(samples_ms), 2),
        "max": round(max(samples_ms), 2),
        "collections": len(samples_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    report = report_opening()
    one_process(WEB_PROCESS)  # compiled modules written once, before anything is timed
    web, worker = [], []
    for _ in range(args.rounds):
        web.append(one_process(WEB_PROCESS))
        worker.append(one_process(WORKER_PROCESS))
    report["web_process"] = summarize(web)
    report["worker"] = summarize(worker)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
