"""API document benchmark: what one GET of /api/v1/openapi.json costs the web process.

    .venv/bin/python bench/openapi_document.py [--rounds 5] [--requests 20]

Anyone may fetch the document (the docs page and client generators read it), so its cost per request
is what an anonymous client can make the web tier spend. Measured through Django's test client (the
whole request: middleware, the view, the JSON written; no network, no database): the process's CPU
time per request. Now: the schema made once per process (api/v1.py). Baseline, in the same run,
rounds alternating: the schema made again for every request, as django-ninja does by itself.
Printed: the median per request of each. Writes bench/results/openapi_document.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from django.test import Client  # noqa: E402

from api.v1 import api  # noqa: E402
from bench.measuring import machine_speed, report_opening, write_results  # noqa: E402 - beside this file

RESULTS = ROOT / "bench" / "results" / "openapi_document.json"
URL = "/api/v1/openapi.json"


def cpu_per_request(client: Client, requests: int, *, made_each_time: bool) -> list[float]:
    samples = []
    for _ in range(requests):
        if made_each_time:
            api._schemas.clear()  # the baseline: nothing kept between requests
        started = time.process_time()
        response = client.get(URL)
        samples.append(time.process_time() - started)
        assert response.status_code == 200, response.status_code
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    client = Client(headers={"host": "localhost"})
    client.get(URL)  # imports and first-use caches, out of both figures
    report = report_opening(requests_per_round=args.requests, rounds=args.rounds)
    now: list[float] = []
    before: list[float] = []
    for _ in range(args.rounds):
        before += cpu_per_request(client, args.requests, made_each_time=True)
        now += cpu_per_request(client, args.requests, made_each_time=False)
    report["baseline_made_for_each_request_ms"] = round(statistics.median(before) * 1000, 2)
    report["now_made_once_per_process_ms"] = round(statistics.median(now) * 1000, 2)
    report["document_bytes"] = len(client.get(URL).content)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
