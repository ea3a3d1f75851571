"""Process start benchmark: what a web or management process pays before it serves.

    .venv/bin/python bench/process_start.py [--rounds 5]

Each round starts a fresh Python that sets Django up and loads what a web process serves from (the
URLs, every page and API operation, and the ASGI application), as daphne and manage.py do. Measured:
its wall time and CPU time (user + system, from the kernel's accounting of the child).

A worker's start is measured too: Django set up and the Celery app with every task module loaded, as
`celery worker` and `celery beat` do (manage.py commands pay the same Django setup). Its baseline, in the
same run, also loads daphne's server first, as every process did while daphne was an installed app
(its app module imports the server and Twisted's reactor; only the web process, daphne itself, needs them).

Baseline of the web start, in the same run, rounds alternating: the same start that also imports what every such
process loaded at start before each was made lazy: the `openai` client library (now loaded only by the
agent's worker, a plain evaluation task and "Test connection"), the Docker client library (by the
workers that start sandboxes) and the S3 storage with boto3 (where files are stored on S3).
Writes bench/results/process_start.json.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.measuring import machine_speed, report_opening, write_results  # noqa: E402 - beside this file

RESULTS = ROOT / "bench" / "results" / "process_start.json"
WEB_PROCESS_START = """
import sys
import django
django.setup()
import config.urls
import config.asgi
for library in ("openai", "docker", "boto3"):
    assert library not in sys.modules, f"the platform imports {library} at start again"
"""
WITH_THE_CLIENT_LIBRARIES = """
import django
django.setup()
import config.urls
import config.asgi
import openai
import docker
import storages.backends.s3
"""
WORKER_PROCESS_START = """
import sys
import django
django.setup()
from config.celery import app
app.loader.import_default_modules()
assert "twisted" not in sys.modules, "a worker imports Twisted (daphne's server) at start again"
"""
WORKER_WITH_DAPHNE_APP = """
import daphne.server
import django
django.setup()
from config.celery import app
app.loader.import_default_modules()
"""


def one_start(program: str) -> dict[str, float]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "true"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", program], cwd=ROOT, env=env, check=True, timeout=120)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": seconds, "cpu_s": cpu}


def summarize(samples: list[dict[str, float]]) -> dict[str, Any]:
    return {
        "starts": len(samples),
        "median_seconds": round(statistics.median(s["seconds"] for s in samples), 2),
        "median_cpu_s": round(statistics.median(s["cpu_s"] for s in samples), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    report = report_opening()
    one_start(WEB_PROCESS_START)  # compiled modules written once, before anything is timed
    one_start(WORKER_PROCESS_START)
    now, before, worker_now, worker_before = [], [], [], []
    for _ in range(args.rounds):
        before.append(one_start(WITH_THE_CLIENT_LIBRARIES))
        now.append(one_start(WEB_PROCESS_START))
        worker_before.append(one_start(WORKER_WITH_DAPHNE_APP))
        worker_now.append(one_start(WORKER_PROCESS_START))
    report["baseline_with_the_client_libraries"] = summarize(before)
    report["now"] = summarize(now)
    report["worker_baseline_with_daphne_s_app"] = summarize(worker_before)
    report["worker_now"] = summarize(worker_now)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
