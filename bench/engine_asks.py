"""What asking this host's Docker engine costs a worker, per client it makes and per health beat.

    .venv/bin/python bench/engine_asks.py [--calls 100] [--rounds 3]

A worker makes a Docker client for every sandbox it starts and every sweep, and checks its engine
every SANDBOX_HOST_BEAT_SECONDS (sandboxes/host_keeper.py). Measured in the same run, in batches
taking turns, on the real engine:

- a client as docker-py's `from_env()` makes it, which first asks the engine its API version
  (GET /version; the engine starts `runc --version` and `docker-init --version` to answer), against
  `engine_client()`, which asks once per process (sandboxes/engine_client.py);
- a beat as every beat was (such a client, `docker info`, the image looked up), against a beat
  between two whole checks now (a client and a ping).

Each figure is the median wall time of a call, and the CPU of the whole machine per call (the
engine's and its children's included: the engine's work is what the worker does not see).
Writes bench/results/engine_asks.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.measuring import machine_cpu_seconds, machine_speed, report_opening, write_results  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "engine_asks.json"
TIMEOUT_SECONDS = 60


def _batch(call: Callable[[], None], calls: int) -> dict[str, float]:
    walls = []
    cpu_before = machine_cpu_seconds()
    for _ in range(calls):
        started = time.perf_counter()
        call()
        walls.append((time.perf_counter() - started) * 1000)
    cpu = machine_cpu_seconds() - cpu_before
    return {"median_ms": statistics.median(walls), "machine_cpu_ms_per_call": cpu * 1000 / calls}


def _summary(batches: list[dict[str, float]]) -> dict[str, Any]:
    return {
        "batches": len(batches),
        "median_ms": round(statistics.median(b["median_ms"] for b in batches), 2),
        "machine_cpu_ms_per_call": round(statistics.median(b["machine_cpu_ms_per_call"] for b in batches), 2),
        "machine_cpu_ms_per_call_each_batch": [round(b["machine_cpu_ms_per_call"], 2) for b in batches],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100, help="calls per batch")
    parser.add_argument("--rounds", type=int, default=3, help="batches of each kind, taking turns")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    import django

    django.setup()
    import docker

    from sandboxes.engine_client import engine_client
    from sandboxes.image import image_exists, sandbox_image_tag

    tag = sandbox_image_tag()

    def client_as_before() -> None:
        docker.from_env(timeout=TIMEOUT_SECONDS).close()

    def client_now() -> None:
        engine_client(timeout=TIMEOUT_SECONDS).close()

    def beat_as_before() -> None:
        client = docker.from_env(timeout=TIMEOUT_SECONDS)
        client.info()
        image_exists(client, tag)
        client.close()

    def beat_now() -> None:
        client = engine_client(timeout=TIMEOUT_SECONDS)
        client.ping()
        client.close()

    kinds = {
        "client_asking_the_version_each_time": client_as_before,
        "client_with_the_version_asked_once": client_now,
        "beat_as_before": beat_as_before,
        "beat_between_whole_checks_now": beat_now,
    }
    report = report_opening(calls_per_batch=args.calls)
    client_now()  # the one ask of the version this process makes, before anything is timed
    batches: dict[str, list[dict[str, float]]] = {name: [] for name in kinds}
    for _ in range(args.rounds):
        for name, call in kinds.items():
            batches[name].append(_batch(call, args.calls))
    for name in kinds:
        report[name] = _summary(batches[name])
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
