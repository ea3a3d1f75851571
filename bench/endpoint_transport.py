"""Model endpoint transport benchmark: what the address check on every
connection and the cap on every reply cost a model request.

    .venv/bin/python bench/endpoint_transport.py [--requests 300]

The same client (`OpenAIModelClient`) asks the scripted model for a short
streamed reply over a kept-alive loopback connection, once through the
platform's guarded transport and, as the baseline in the same run, through
the `openai` package's default HTTP client without it; alternating rounds,
so drift on the machine falls on both. Writes bench/results/endpoint_transport.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from unittest.mock import patch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

import httpx2  # noqa: E402
import openai  # noqa: E402

from devstack.scripted_model import ScriptedModel, reply  # noqa: E402
from sandboxes.agent import openai_client  # noqa: E402
from sandboxes.agent.endpoint_addresses import GuardedTransport  # noqa: E402
from sandboxes.agent.openai_client import CONNECTION_LIMITS, OpenAIModelClient  # noqa: E402

MESSAGES = [{"role": "user", "content": "hi"}]


def plain_client() -> httpx2.Client:
    cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    return openai.DefaultHttpx2Client(cookies=cookies, limits=CONNECTION_LIMITS)


def guarded_client() -> httpx2.Client:
    cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    transport = GuardedTransport(allow_private=True, limits=CONNECTION_LIMITS)
    return openai.DefaultHttpx2Client(cookies=cookies, limits=CONNECTION_LIMITS, transport=transport)


def milliseconds_per_request(server: ScriptedModel, make_http: Callable[[], httpx2.Client], requests: int) -> float:
    http = make_http()
    with patch.object(openai_client, "shared_http_client", return_value=http):
        client = OpenAIModelClient(base_url=server.base_url, model=server.model)
    for _ in range(20):  # warm: connection made, code paths loaded
        client.complete(MESSAGES, [], on_text=lambda _: None, on_reasoning=lambda _: None)
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        client.complete(MESSAGES, [], on_text=lambda _: None, on_reasoning=lambda _: None)
        times.append(time.perf_counter() - started)
    http.close()
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    rounds: dict[str, list[float]] = {"guarded": [], "plain": []}
    with ScriptedModel(exhausted=reply("a short streamed answer " * 20)) as server:
        for _ in range(3):
            rounds["plain"].append(milliseconds_per_request(server, plain_client, args.requests))
            rounds["guarded"].append(milliseconds_per_request(server, guarded_client, args.requests))
    guarded, plain = statistics.median(rounds["guarded"]), statistics.median(rounds["plain"])
    print(f"model request, median of 3 rounds x {args.requests}:")
    print(f"  guarded transport (address check + reply cap)  {guarded:7.3f} ms")
    print(f"  openai default client (baseline, same run)      {plain:7.3f} ms")
    print(f"  guarded / baseline: x{guarded / plain:.2f}")
    results = {
        "machine": platform.node(),
        "requests_per_round": args.requests,
        "rounds_ms": rounds,
        "guarded_ms": guarded,
        "baseline_ms": plain,
        "ratio": guarded / plain,
    }
    out = ROOT / "bench" / "results" / "endpoint_transport.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
