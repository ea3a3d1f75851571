"""Stream benchmark: how fast a stored run event reaches a watching websocket,
and how many scripted runs the stack finishes per minute.

    DATABASE_URL=postgres://... .venv/bin/python bench/stream.py [--concurrent 50] [--throughput-runs 60]

Starts the real stack (daphne, a Celery worker with a thread pool, Redis,
PostgreSQL, gVisor sandboxes) on a database of its own, a scripted
OpenAI-compatible model in a separate process, and measures:

- baseline: events written straight into the database by this process (no
  agent, no sandbox) -> websocket: the transport alone;
- latency with 1 (five runs, one after another) and with N concurrent 20-step scripted runs (event stored ->
  event received, p50/p99, live events only), each run watched at once over the
  websocket (the pages) and over the API's Server-Sent Events stream (scripts):
  the two paths measured on the same events;
- runs per minute for 20-step scripted runs, end to end: with the worker as
  deployed (WORKER_CONCURRENCY's default, 4 runs at once per core) and, for
  comparison, with one worker thread per latency-phase run (oversubscribed);
  each step starts a process in the sandbox (`ls`); a last round uses shell
  builtins only, which leaves the platform's own cost per run;
- cancel: request -> the sandbox container is gone.

With --hops (root, tcpdump), each live event of the one-run phase is timed hop by hop from a capture
of its loopback traffic (bench/event_hops.py), in `latency_1_run_hops`: which process the tail is in.

The stack runs with the knobs as a deployment gets them (`deployed_knobs`: access rechecks, polls,
the reaper), not at the tests' shorter clocks, which would make daphne ask for every watcher's access
every second. Which CPU priority the sandboxes had is printed first and recorded with the
figures (`sandbox_cpu_priority`: their parent cgroup and its weight, or none):
the worker prepares SANDBOX_CGROUP_PARENT as it starts. The latency phases run
again with the sandboxes in Docker's default parent (`*_without_cgroup`), the
baseline that priority is measured against (`--no-cgroup-comparison` skips it).

Prints the figures and writes bench/results/stream.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.event_hops import Ports, hops_timed  # noqa: E402
from bench.measuring import (  # noqa: E402
    BENCH_ENV,
    PhaseLoad,
    cpu_per_run,
    cpu_snapshot,
    deployed_knobs,
    machine_speed,
    sandbox_priority,
    summary,
    write_results,
)
from bench.watchers import watch_runs  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
BENCH_DB_SUFFIX = "_bench"  # a database of its own, named after DATABASE_URL's
ONE_RUN_ROUNDS = 5


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrent", type=int, default=50)
    parser.add_argument("--throughput-runs", type=int, default=60)
    parser.add_argument("--worker-concurrency", type=int, default=0, help="default: max(concurrent, 16)")
    parser.add_argument(
        "--worker-nice", type=int, default=5, help="run the worker (batch work) at this lower CPU priority, as deployed"
    )
    parser.add_argument(
        "--pool-size", type=int, default=4, help="SANDBOX_POOL_SIZE of the worker (pre-started sandboxes)"
    )
    parser.add_argument(
        "--web-nice",
        type=int,
        default=-10,
        help="priority of the web tier (daphne, Redis) and of this process's websocket clients, which stand"
        " for browsers on other machines; negative values need root",
    )
    parser.add_argument(
        "--model-nice", type=int, default=10, help="priority of the scripted model, which stands for a remote endpoint"
    )
    parser.add_argument(
        "--hops",
        action="store_true",
        help="capture the one-run phase's loopback traffic with tcpdump and time each event's hops from it"
        " (bench/event_hops.py; needs root and tcpdump)",
    )
    parser.add_argument(
        "--no-cgroup-comparison",
        action="store_true",
        help="skip the latency phases with the sandboxes in Docker's default cgroup (no low-weight parent)",
    )
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings

    from devstack.databases import database_url, throwaway_database
    from devstack.ports import free_port
    from devstack.processes import Process, niced
    from devstack.redis_server import RedisServer, this_process_on
    from devstack.stack import AtelierServer, stack_env, web_process, worker_process

    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"atelier-bench-{os.getpid()}"
    workdir.mkdir(parents=True, exist_ok=True)
    if args.web_nice < 0 and os.geteuid() != 0:
        sys.exit("--web-nice below 0 needs root (or pass --web-nice 0)")
    os.nice(args.web_nice - os.nice(0))  # this process's websocket clients stand for browsers elsewhere
    worker_concurrency = args.worker_concurrency or max(args.concurrent, 16)
    results: dict[str, Any] = {}
    speed_before = machine_speed()
    # A Redis of its own, as privileged as the web tier: nothing else shares its CPU budget or keys.
    with (
        throwaway_database(BENCH_DB_SUFFIX),
        RedisServer(workdir, nice=args.web_nice) as redis_server,
        this_process_on(redis_server.url),
    ):
        knobs = deployed_knobs()  # the web tier and the worker as deployed, not at the tests' clocks
        overrides = {
            **BENCH_ENV,
            **knobs,
            # One signed-in person watches every run here, from one address.
            "RUN_WS_MAX_PER_USER": "1000",
            "RUN_WS_MAX_PER_ADDRESS": "1000",
            "SANDBOX_POOL_SIZE": str(args.pool_size),
        }
        media_root = workdir / "media"
        env = stack_env(
            database_url=database_url(), media_root=media_root, redis_url=redis_server.url, overrides=overrides
        )
        settings.MEDIA_ROOT = media_root
        port = free_port()
        server = AtelierServer(
            base_url=f"http://127.0.0.1:{port}",
            port=port,
            media_root=media_root,
            redis_url=redis_server.url,
            processes={"web": web_process(port, env, workdir, nice=args.web_nice)},
        )

        def worker(concurrency: int | None, cgroup_parent: str = settings.SANDBOX_CGROUP_PARENT) -> Process:
            """The Celery worker; concurrency None: as deployed (settings: WORKER_CONCURRENCY)."""
            env_here = {**env, "SANDBOX_CGROUP_PARENT": cgroup_parent}
            return worker_process(env_here, workdir, threads=concurrency, nice=args.worker_nice)

        def restart_worker(concurrency: int | None, cgroup_parent: str = settings.SANDBOX_CGROUP_PARENT) -> None:
            server.replace_worker(worker(concurrency, cgroup_parent))

        server.processes["worker"] = worker(worker_concurrency)
        port_file = workdir / "model.port"
        model = subprocess.Popen(
            niced(args.model_nice, [sys.executable, str(Path(__file__).parent / "stream_model.py"), str(port_file)]),
            cwd=ROOT,
        )
        try:
            server.start()
            while not port_file.exists():
                time.sleep(0.05)
            model_url = f"http://127.0.0.1:{port_file.read_text()}/v1"
            results = run_scenarios(
                server,
                model_url,
                args.concurrent,
                args.throughput_runs,
                worker_concurrency,
                restart_worker,
                compare_without_cgroup=not args.no_cgroup_comparison,
                hops_pcap=workdir / "one-run.pcap" if args.hops else None,
            )
        finally:
            model.terminate()
            server.stop()

    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "worker_threads": worker_concurrency,
        "worker_nice": args.worker_nice,
        "web_nice": args.web_nice,
        "model_nice": args.model_nice,
        "sandbox_pool_size": args.pool_size,
        # What the stack ran with of the knobs devstack sets for tests (this benchmark's own on top).
        "stack_knobs": {name: overrides[name] for name in knobs},
        "python_loop_10m_s_before_and_after": [speed_before, machine_speed()],
    }
    results["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    # A latency-only round (BENCH_LATENCY_ONLY) keeps the full round's figures.
    latency_only = os.environ.get("BENCH_LATENCY_ONLY")
    write_results(ROOT / "bench" / "results" / ("stream-latency.json" if latency_only else "stream.json"), results)


def run_scenarios(
    server: Any,
    model_url: str,
    concurrent: int,
    throughput_runs: int,
    latency_threads: int,
    restart_worker: Any,
    *,
    compare_without_cgroup: bool,
    hops_pcap: Path | None = None,
) -> dict[str, Any]:
    from django.conf import settings
    from django.contrib.auth.models import User

    from api.models import TokenScope
    from api.tokens import token_create
    from creations.events.store import store_events
    from creations.models import FINAL_STATUSES, Run, RunStatus
    from creations.runs.services import creation_submit, run_cancel
    from creations.runs.state import run_finish
    from devstack.containers import run_containers
    from sandboxes.cpu_priority import OFFLINE
    from workspaces.models import ModelEndpoint, Role
    from workspaces.services import membership_add, workspace_create

    owner = User.objects.create_user(f"bench-{os.getpid()}", password="x")  # noqa: S106 - a throwaway database
    workspace = workspace_create(name="Bench", owner=owner)
    workspace.run_max_steps = 100
    workspace.save()
    membership_add(workspace=workspace, user=owner, role=Role.OWNER)
    endpoint = ModelEndpoint.objects.create(workspace=workspace, name="scripted", base_url=model_url, model="scripted")
    cookie = server.cookie_for(owner)
    token = token_create(user=owner, name="bench", scope=TokenScope.READ, expires_in_days=None).raw

    def submit(brief: str = "bench run") -> Run:
        return creation_submit(workspace=workspace, author=owner, brief=brief, model_endpoint=endpoint)

    def wait_final(runs: list[Run], timeout: float = 900) -> None:
        ids = [r.pk for r in runs]
        deadline = time.monotonic() + timeout
        while Run.objects.filter(pk__in=ids).exclude(status__in=FINAL_STATUSES).exists():
            if time.monotonic() > deadline:
                raise RuntimeError("runs did not finish in time\n" + server.logs())
            time.sleep(0.2)

    def watch(run_ids: list[int], announced: list[float] | None = None, loop_lag: list[float] | None = None) -> Any:
        return watch_runs(server, run_ids, cookie=cookie, token=token, announced=announced, loop_lag=loop_lag)

    ports = Ports.of_stack(server.port, server.redis_url, settings.DATABASES["default"])
    results: dict[str, Any] = {
        "sandbox_cpu_priority": sandbox_priority(settings.SANDBOX_CGROUP_PARENT),
        "preview_sandbox_cpu_priority": sandbox_priority(settings.SANDBOX_OFFLINE_CGROUP_PARENT, OFFLINE),
    }

    # Baseline: the transport alone (events written by this process at ~50/s, one watcher).
    run = submit("baseline")
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)

    async def baseline() -> tuple[list[float], list[float]]:
        watcher = asyncio.ensure_future(watch([run.pk]))
        await asyncio.sleep(1.0)
        for i in range(300):
            await asyncio.to_thread(
                store_events, run.pk, [("tool_output_delta", {"step": 1, "call_id": "c", "text": f"line {i}\n"})]
            )
            await asyncio.sleep(0.02)
        await asyncio.to_thread(run_finish, run_id=run.pk, status=RunStatus.SUCCEEDED, reason="bench")
        return await watcher

    load = PhaseLoad()
    over_socket, over_stream = asyncio.run(baseline())
    results["baseline_transport_only"] = {**summary(over_socket), "machine_load": load.record()}
    results["baseline_transport_only_sse"] = summary(over_stream)
    print("baseline", results["baseline_transport_only"], "SSE", results["baseline_transport_only_sse"], flush=True)

    def latency_phases(suffix: str = "") -> None:
        # One run's ~145 live events make its p99 the second slowest of them: the one-run phase is
        # ONE_RUN_ROUNDS runs, one after another, so its p99 is read from several hundred events.
        for phase, count, rounds in (
            ("latency_1_run", 1, ONE_RUN_ROUNDS),
            (f"latency_{concurrent}_runs", concurrent, 1),
        ):
            label = phase + suffix
            load = PhaseLoad()
            started = time.monotonic()
            samples: list[float] = []
            sse_samples: list[float] = []
            announced: list[float] = []
            loop_lag: list[float] = []
            run_ids: list[int] = []
            capture = hops_pcap if label == "latency_1_run" else None
            with hops_timed(capture, ports, into=results, key=f"{label}_hops"):
                for _ in range(rounds):
                    runs = [submit(f"latency {n}") for n in range(count)]
                    over_socket, over_stream = asyncio.run(watch([r.pk for r in runs], announced, loop_lag))
                    samples += over_socket
                    sse_samples += over_stream
                    wait_final(runs)
                    run_ids += [r.pk for r in runs]
            elapsed = time.monotonic() - started
            statuses = list(Run.objects.filter(pk__in=run_ids).values_list("status", flat=True))
            results[label] = {
                **summary(samples),
                "runs": count,
                "rounds": rounds,
                "succeeded": statuses.count(RunStatus.SUCCEEDED),
                "seconds": round(elapsed, 1),
                "machine_load": load.record(),
            }
            results[f"{label}_sse"] = summary(sse_samples)
            # The same events as their announcements reached a listener of the bench's own (no daphne).
            results[f"{label}_announced"] = summary(announced)
            # How late the watchers' own loop woke meanwhile: what of the tail is this client's.
            results[f"{label}_client_loop_lag"] = summary(loop_lag)
            print(
                label,
                results[label],
                "SSE",
                results[f"{label}_sse"],
                "announced",
                results[f"{label}_announced"],
                "client loop lag",
                results[f"{label}_client_loop_lag"],
                flush=True,
            )

    latency_phases()
    # The same phases with the sandboxes in Docker's default parent (/docker): what the low weight buys.
    if compare_without_cgroup and settings.SANDBOX_CGROUP_PARENT:
        restart_worker(latency_threads, cgroup_parent="")
        results["sandbox_cpu_priority_without_cgroup"] = sandbox_priority("")
        latency_phases("_without_cgroup")
        restart_worker(latency_threads)
    if os.environ.get("BENCH_LATENCY_ONLY"):  # a quicker round while profiling
        return results

    def throughput(worker_threads: int, kind: str = "") -> dict[str, Any]:
        pids = {name: proc.popen.pid for name, proc in server.processes.items() if proc.popen is not None}
        cpu_before = cpu_snapshot(pids)
        runs = [submit(f"throughput {n} {kind}") for n in range(throughput_runs)]
        load = PhaseLoad()
        started = time.monotonic()
        wait_final(runs)
        elapsed = time.monotonic() - started
        cpu_after = cpu_snapshot(pids)
        statuses = list(Run.objects.filter(pk__in=[r.pk for r in runs]).values_list("status", flat=True))
        return {
            "runs": throughput_runs,
            "worker_threads": worker_threads,
            "succeeded": statuses.count(RunStatus.SUCCEEDED),
            "seconds": round(elapsed, 1),
            "runs_per_minute": round(throughput_runs / elapsed * 60, 1),
            "cpu_per_run": cpu_per_run(cpu_before, cpu_after, throughput_runs),
            "machine_load": load.record(),
        }

    # First with the latency phases' worker (a thread for each of the N runs at
    # once): what oversubscribing the machine costs. Then as deployed:
    # WORKER_CONCURRENCY's default, 4 runs per core, the rest queued.
    if latency_threads != settings.CELERY_WORKER_CONCURRENCY:
        results["throughput_oversubscribed"] = throughput(latency_threads)
        print("throughput oversubscribed", results["throughput_oversubscribed"], flush=True)
        restart_worker(None)
    results["throughput_20_step_runs"] = throughput(settings.CELERY_WORKER_CONCURRENCY)
    print("throughput", results["throughput_20_step_runs"], flush=True)
    results["throughput_20_step_runs_builtins_only"] = throughput(settings.CELERY_WORKER_CONCURRENCY, "builtins only")
    print("throughput builtins only", results["throughput_20_step_runs_builtins_only"], flush=True)

    cancel_ms: list[float] = []
    for _ in range(5):
        run = submit("cancel me")
        deadline = time.monotonic() + 60
        while not run.events.filter(kind="tool_call").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        started = time.monotonic()
        run_cancel(run=run, user=owner)
        while run_containers(run.pk) and time.monotonic() - started < 30:
            time.sleep(0.02)
        cancel_ms.append((time.monotonic() - started) * 1000)
        run.refresh_from_db()
        print("cancel round:", run.status, run.reason, run.events.count(), "events", flush=True)
    results["cancel_to_sandbox_gone"] = {
        "p50_ms": round(statistics.median(cancel_ms), 1),
        "max_ms": round(max(cancel_ms), 1),
        "rounds": len(cancel_ms),
    }
    print("cancel", results["cancel_to_sandbox_gone"], flush=True)
    results["targets"] = {"p99_ms_at_50_runs": 50, "runs_per_minute": 60, "cancel_ms": 2000}
    return results


if __name__ == "__main__":
    main()
