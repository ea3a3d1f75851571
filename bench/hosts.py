"""Worker hosts benchmark: runs per minute with two worker hosts against one.

    DATABASE_URL=postgres://... .venv/bin/python bench/hosts.py [--runs 24] [--threads 4]

Starts a Redis and a PostgreSQL database of its own, a scripted
OpenAI-compatible model in a separate process, and a second Docker engine on
this machine (its own dockerd, bridge and data root, the sandbox image loaded:
the stand-in for a second host that the tests use too). Every run has a few
steps that each start a process in its gVisor sandbox and wait a moment (a
model's thinking time, played by `sleep`), then submits. Each phase queues all
its runs at once in fresh workspaces and measures until the last one ends:

- one_host: one worker (`--threads` runs at once) on the machine's engine;
- two_hosts: that worker and a second one, same threads, on the second engine,
  each with its own SANDBOX_HOST_ID, sharing the database and Redis.

Both phases run on the same 2 cores, so a second host adds run slots, not CPU:
what it shows is that the hosts share the queue (how many runs each took) and
what a host's slots are worth while the sandboxes mostly wait. Prints the
figures and writes bench/results/hosts.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.measuring import BENCH_ENV, machine_speed  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
BENCH_DB_SUFFIX = "_bench_hosts"
RESULTS = ROOT / "bench" / "results" / "hosts.json"
STEPS = 4
THINK_SECONDS = 1.5


def serve_model(port_file: str) -> None:
    from devstack.scripted_model import ScriptedModel, bash, submit

    script = [bash(f"ls /testbed > /dev/null; sleep {THINK_SECONDS}", f"Step {i}.") for i in range(1, STEPS + 1)]
    script.append(submit("done"))

    def answer(body: dict[str, Any]) -> Any:  # each conversation by its own progress
        done = sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")
        return script[min(done, len(script) - 1)]

    server = ScriptedModel(exhausted=answer).start()
    Path(port_file).write_text(str(server.port))
    while True:
        time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=24, help="runs per phase")
    parser.add_argument("--threads", type=int, default=4, help="runs at once per worker host")
    parser.add_argument("--serve-model", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model:
        serve_model(args.serve_model)
        return

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from devstack.databases import database_url, throwaway_database
    from devstack.docker_engine import second_docker_engine
    from devstack.processes import Process, niced
    from devstack.redis_server import RedisServer, this_process_on
    from devstack.stack import stack_env, start_worker_process, worker_process
    from sandboxes.image import sandbox_image_tag

    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"atelier-bench-hosts-{os.getpid()}"
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    speed_before = machine_speed()
    with throwaway_database(BENCH_DB_SUFFIX), ExitStack() as stack:
        engine_started = time.monotonic()
        engine = stack.enter_context(second_docker_engine(workdir / "engine-b", sandbox_image_tag()))
        results["second_engine_start_s"] = round(time.monotonic() - engine_started, 1)
        redis_server = stack.enter_context(RedisServer(workdir))
        stack.enter_context(this_process_on(redis_server.url))
        media_root = workdir / "media"
        env = stack_env(
            database_url=database_url(), media_root=media_root, redis_url=redis_server.url, overrides=BENCH_ENV
        )
        settings.MEDIA_ROOT = media_root

        def worker(name: str, extra: dict[str, str]) -> Process:
            env_here = {**env, "SANDBOX_HOST_ID": f"bench-{name}", **extra}
            return worker_process(env_here, workdir, name=name, threads=args.threads)

        host_a, host_b = worker("host-a", {}), worker("host-b", engine.sandbox_env())
        port_file = workdir / "model.port"
        model = subprocess.Popen(niced(10, [sys.executable, __file__, "--serve-model", str(port_file)]), cwd=ROOT)
        stack.callback(model.terminate)
        stack.callback(host_a.stop)
        stack.callback(host_b.stop)
        start_worker_process(host_a)
        while not port_file.exists():
            time.sleep(0.05)
        model_url = f"http://127.0.0.1:{port_file.read_text()}/v1"
        phase(model_url, "warm-up", runs=args.threads)
        results["one_host"] = phase(model_url, "one_host", runs=args.runs)
        print("one_host", json.dumps(results["one_host"]), flush=True)
        start_worker_process(host_b)
        phase(model_url, "warm-up-b", runs=2 * args.threads)
        results["two_hosts"] = phase(model_url, "two_hosts", runs=args.runs)
        print("two_hosts", json.dumps(results["two_hosts"]), flush=True)
        connection.close()

    results["two_hosts_vs_one"] = round(
        results["two_hosts"]["runs_per_minute"] / results["one_host"]["runs_per_minute"], 2
    )
    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "threads_per_host": args.threads,
        "run": f"{STEPS} steps, each a process in the sandbox and {THINK_SECONDS} s of waiting, then submit",
        "python_loop_10m_s_before_and_after": [speed_before, machine_speed()],
    }
    results["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print_table(results)
    print(f"written to {RESULTS.relative_to(ROOT)}")


def phase(model_url: str, name: str, *, runs: int) -> dict[str, Any]:
    """Queue `runs` runs at once (one workspace, quota out of the way) and wait for them all."""
    from django.contrib.auth.models import User
    from django.db import transaction

    from creations.models import FINAL_STATUSES, Run, RunStatus
    from creations.runs.services import creation_submit
    from workspaces.models import ModelEndpoint
    from workspaces.services import workspace_create

    owner = User.objects.create_user(f"{name}-owner", password="x")  # noqa: S106 - a throwaway database
    workspace = workspace_create(name=f"{name}", owner=owner)
    workspace.quota_concurrent_runs = 1000
    workspace.save(update_fields=["quota_concurrent_runs"])
    endpoint = ModelEndpoint.objects.create(workspace=workspace, name="scripted", base_url=model_url, model="scripted")
    started = time.monotonic()
    with transaction.atomic():
        run_ids = [
            creation_submit(workspace=workspace, author=owner, brief=f"run {n}", model_endpoint=endpoint).pk
            for n in range(runs)
        ]
    deadline = time.monotonic() + 1200
    while Run.objects.filter(pk__in=run_ids).exclude(status__in=FINAL_STATUSES).exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name}: the runs did not finish in 20 minutes")
        time.sleep(0.2)
    elapsed = time.monotonic() - started
    rows = list(Run.objects.filter(pk__in=run_ids).values_list("status", "sandbox_host"))
    return {
        "runs": len(rows),
        "succeeded": sum(status == RunStatus.SUCCEEDED for status, _ in rows),
        "seconds": round(elapsed, 1),
        "runs_per_minute": round(len(rows) / elapsed * 60, 1),
        "runs_by_host": dict(Counter(host for _, host in rows)),
    }


def print_table(results: dict[str, Any]) -> None:
    print()
    print(f"{'':12} {'runs':>5} {'ok':>4} {'seconds':>8} {'runs/min':>9}  by host")
    for name in ("one_host", "two_hosts"):
        row = results[name]
        print(
            f"{name:12} {row['runs']:>5} {row['succeeded']:>4} {row['seconds']:>8} {row['runs_per_minute']:>9}"
            f"  {row['runs_by_host']}"
        )
    print(f"two hosts / one: x{results['two_hosts_vs_one']}")


if __name__ == "__main__":
    main()
