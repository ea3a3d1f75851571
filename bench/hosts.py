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

from measuring import machine_speed, niced  # noqa: E402 - beside this file

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
BENCH_DB_SUFFIX = "_bench_hosts"
RESULTS = ROOT / "bench" / "results" / "hosts.json"
STEPS = 4
THINK_SECONDS = 1.5


def serve_model(port_file: str) -> None:
    from tests.support.scripted_model import ScriptedModel, bash, submit

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

    from sandboxes.image import sandbox_image_tag
    from tests.support.databases import throwaway_database
    from tests.support.fixtures.docker_engine import second_docker_engine
    from tests.support.fixtures.runs import PROCESS_ENV, RedisServer, _point_this_process_at, _Process, _wait_for_log

    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"atelier-bench-hosts-{os.getpid()}"
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    speed_before = machine_speed()
    with throwaway_database(BENCH_DB_SUFFIX, needed_by="bench/hosts.py"), ExitStack() as stack:
        engine_started = time.monotonic()
        engine = stack.enter_context(second_docker_engine(workdir / "engine-b", sandbox_image_tag()))
        results["second_engine_start_s"] = round(time.monotonic() - engine_started, 1)
        redis_server = RedisServer(workdir)
        redis_server.start()
        stack.callback(redis_server.stop)
        _point_this_process_at(redis_server.url)
        db = connection.settings_dict
        env = {
            **os.environ,
            **PROCESS_ENV,
            "RUN_HEARTBEAT_SECONDS": "5",
            "DJANGO_SETTINGS_MODULE": "config.test_settings",
            "DATABASE_URL": (
                f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
                f"/{db['NAME']}"
            ),
            "REDIS_URL": redis_server.url,
            "CELERY_BROKER_URL": redis_server.url,
            "MEDIA_ROOT": str(workdir / "media"),
            "LOG_LEVEL": "WARNING",
        }
        settings.MEDIA_ROOT = workdir / "media"
        celery = [str(Path(sys.executable).parent / "celery"), "-A", "config", "worker"]

        def worker(name: str, extra: dict[str, str]) -> _Process:
            argv = [
                *celery,
                *("--pool", "threads", "--concurrency", str(args.threads), "--hostname", f"{name}@%h"),
                *("--loglevel", "INFO", "--without-gossip", "--without-mingle"),
            ]
            return _Process(name, argv, {**env, "SANDBOX_HOST_ID": f"bench-{name}", **extra}, workdir / f"{name}.log")

        host_a, host_b = worker("host-a", {}), worker("host-b", engine.sandbox_env())
        port_file = workdir / "model.port"
        model = subprocess.Popen(niced(10, [sys.executable, __file__, "--serve-model", str(port_file)]), cwd=ROOT)
        stack.callback(model.terminate)
        stack.callback(host_a.stop)
        stack.callback(host_b.stop)
        host_a.start()
        _wait_for_log(host_a, "ready.")
        while not port_file.exists():
            time.sleep(0.05)
        model_url = f"http://127.0.0.1:{port_file.read_text()}/v1"
        phase(model_url, "warm-up", runs=args.threads)
        results["one_host"] = phase(model_url, "one_host", runs=args.runs)
        print("one_host", json.dumps(results["one_host"]), flush=True)
        host_b.start()
        _wait_for_log(host_b, "ready.")
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
    from django.db import transaction

    from creations.models import FINAL_STATUSES, Run, RunStatus
    from creations.runs.services import creation_submit
    from tests.support.fixtures.accounts import make_user
    from workspaces.models import ModelEndpoint
    from workspaces.services import workspace_create

    owner = make_user(f"{name}-owner")
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
