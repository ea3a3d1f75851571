"""Throwaway Redis benchmark: what starting and stopping a test's own Redis costs in wall time.

    .venv/bin/python bench/throwaway_redis.py [--rounds 20]

The tests start a Redis server of their own (`devstack.redis_server.RedisServer`) for about two
hundred tests of the fast group, and for every stack. Measured per server: the wall time of
`start()` (until it listens) and of `stop()` (until its port is closed).

Baseline, in the same run, rounds alternating: `stop()` as it was, by SIGTERM alone, which Redis acts
on at its next timer tick. Writes bench/results/throwaway_redis.json.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.measuring import machine_speed, report_opening, write_results  # noqa: E402 - beside this file
from devstack.redis_server import RedisServer  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "throwaway_redis.json"


def signal_only(server: RedisServer) -> None:
    """The baseline: no SHUTDOWN command first."""


def one_server(workdir: Path, shut_down_now: Callable[[RedisServer], None] | None) -> tuple[float, float]:
    workdir.mkdir()
    server = RedisServer(workdir)
    if shut_down_now is not None:
        server._shut_down_now = lambda: shut_down_now(server)  # type: ignore[method-assign]
    started = time.perf_counter()
    server.start()
    start_seconds = time.perf_counter() - started
    started = time.perf_counter()
    server.stop()
    return start_seconds, time.perf_counter() - started


def summarize(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "servers": len(samples),
        "median_start_ms": round(statistics.median(s[0] for s in samples) * 1000, 1),
        "median_stop_ms": round(statistics.median(s[1] for s in samples) * 1000, 1),
        "max_stop_ms": round(max(s[1] for s in samples) * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    report = report_opening()
    now: list[tuple[float, float]] = []
    before: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-redis-") as tmp:
        for index in range(args.rounds):
            before.append(one_server(Path(tmp) / f"before-{index}", signal_only))
            now.append(one_server(Path(tmp) / f"now-{index}", None))
    report["baseline_sigterm_only"] = summarize(before)
    report["now"] = summarize(now)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
