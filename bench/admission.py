"""Admission benchmark: how soon a freed slot is used, and how evenly workspaces are served.

    DATABASE_URL=postgres://... .venv/bin/python bench/admission.py [--workspaces 20] [--runs-per-workspace 10]

Starts a Celery worker (thread pool, as deployed: 4 threads per core), a Redis
of its own, a PostgreSQL database of its own and a scripted OpenAI-compatible
model in a separate process whose every reply is `submit` (each run is one
short step in a real gVisor sandbox: admission is what is measured, not the
agent). Then, with fresh workspaces each time:

- baseline_no_quotas: the workspaces' concurrency quota set very high, so only the
  worker's threads limit what runs at once;
- quotas: each workspace at QUOTA_DEFAULT_CONCURRENT_RUNS (2). With more
  workspaces than worker threads the quotas are checked but seldom bind:
  this is admission's cost on the common path;
- quotas_binding: 4 workspaces x 20 runs at a quota of 1, so at most 4 of
  the 8 threads work and every start waits for a slot of its workspace to
  free: the wake-up a finished run sends, end to end.

First, with no worker running (`--queue-only` stops there): queue_5000, the admission query
itself with 5,000 runs queued (50 workspaces x 100, the most RUN_QUEUED_MAX_PER_WORKSPACE lets
each queue), 5,000 runs started within the hour, and either a slot free in every workspace (the
most the query has to number) or none; timed against the query as it was before runs carried
their workspace (`BASELINE_QUERY`: every active run joined to its creation and numbered), on the
same rows in the same run.

Each phase queues its runs for each workspace at once (one
transaction, so the worker sees the whole queue: written workspace after
workspace, the order that favours the first workspaces most if the queue
were served first come, first served), and measures from the rows:

- slot freed -> next start: for each run that ends while others wait, the
  time from its finished_at to the next started_at of any run (p50/p99/max);
- fairness: each workspace's median wait (created -> started) and their
  spread (max - min), plus when the last workspace had its first run started;
- the most runs in flight at once, overall and in any one workspace.

Prints the figures and writes bench/results/admission.json.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.measuring import BENCH_ENV, machine_speed, percentile  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
BENCH_DB_SUFFIX = "_bench_admission"
RESULTS = ROOT / "bench" / "results" / "admission.json"
NO_QUOTA = 1000
QUERY_ROUNDS = 60

# The admission query before runs carried their workspace: every active run joined to its creation
# and numbered, and every run started lately joined to its creation. Kept as the baseline.
BASELINE_QUERY = """
    WITH active AS (
        SELECT r.id, r.status, r.created_at, c.workspace_id, w.quota_concurrent_runs AS quota,
               ROW_NUMBER() OVER (PARTITION BY c.workspace_id ORDER BY r.status = %s, r.created_at, r.id) AS place
        FROM creations_run r
        JOIN creations_creation c ON c.id = r.creation_id
        JOIN workspaces_workspace w ON w.id = c.workspace_id
        WHERE r.status IN (%s, %s, %s)
    ),
    served AS (
        SELECT c.workspace_id, MAX(r.started_at) AS last_started_at
        FROM creations_run r
        JOIN creations_creation c ON c.id = r.creation_id
        WHERE r.started_at >= (SELECT MIN(created_at) FROM creations_run WHERE status = %s) AND r.started_at >= %s
        GROUP BY c.workspace_id
    )
    SELECT a.id, a.workspace_id
    FROM active a
    LEFT JOIN served s ON s.workspace_id = a.workspace_id
    WHERE a.status = %s AND a.place <= a.quota
    ORDER BY a.place, s.last_started_at NULLS FIRST, a.created_at, a.id
    LIMIT %s
"""


def serve_model(port_file: str) -> None:
    from devstack.scripted_model import ScriptedModel, submit

    server = ScriptedModel(exhausted=submit("done")).start()
    Path(port_file).write_text(str(server.port))
    while True:
        time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspaces", type=int, default=20)
    parser.add_argument("--runs-per-workspace", type=int, default=10)
    parser.add_argument("--worker-threads", type=int, default=4 * (os.cpu_count() or 1))
    parser.add_argument("--pool-size", type=int, default=4, help="SANDBOX_POOL_SIZE of the worker")
    parser.add_argument("--model-nice", type=int, default=10, help="priority of the scripted model")
    parser.add_argument("--queue-only", action="store_true", help="only the admission query with 5,000 queued")
    parser.add_argument("--serve-model", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model:
        serve_model(args.serve_model)
        return

    import django

    django.setup()
    from django.conf import settings

    from devstack.databases import database_url, throwaway_database
    from devstack.processes import niced
    from devstack.redis_server import RedisServer, this_process_on
    from devstack.stack import stack_env, start_worker_process, worker_process

    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"atelier-bench-admission-{os.getpid()}"
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    speed_before = machine_speed()
    with (
        throwaway_database(BENCH_DB_SUFFIX),
        RedisServer(workdir) as redis_server,
        this_process_on(redis_server.url),
    ):
        results["queue_5000"] = queue_5000()
        print("queue_5000", json.dumps(results["queue_5000"]), flush=True)
        if args.queue_only:
            print_queue_table(results["queue_5000"])
            return
        media_root = workdir / "media"
        overrides = {**BENCH_ENV, "SANDBOX_POOL_SIZE": str(args.pool_size)}
        env = stack_env(
            database_url=database_url(), media_root=media_root, redis_url=redis_server.url, overrides=overrides
        )
        settings.MEDIA_ROOT = media_root
        worker = worker_process(env, workdir, threads=args.worker_threads)
        port_file = workdir / "model.port"
        model = subprocess.Popen(
            niced(args.model_nice, [sys.executable, __file__, "--serve-model", str(port_file)]), cwd=ROOT
        )
        try:
            start_worker_process(worker)
            while not port_file.exists():
                time.sleep(0.05)
            model_url = f"http://127.0.0.1:{port_file.read_text()}/v1"
            phase(model_url, "warm-up", workspaces=2, runs_per_workspace=4, quota=NO_QUOTA)
            phases = (
                ("baseline_no_quotas", args.workspaces, args.runs_per_workspace, NO_QUOTA),
                ("quotas", args.workspaces, args.runs_per_workspace, settings.QUOTA_DEFAULT_CONCURRENT_RUNS),
                ("quotas_binding", 4, 20, 1),
            )
            for name, workspaces, runs_per_workspace, quota in phases:
                results[name] = phase(
                    model_url, name, workspaces=workspaces, runs_per_workspace=runs_per_workspace, quota=quota
                )
                print(name, json.dumps(results[name]), flush=True)
        finally:
            model.terminate()
            worker.stop()

    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "worker_threads": args.worker_threads,
        "sandbox_pool_size": args.pool_size,
        "python_loop_10m_s_before_and_after": [speed_before, machine_speed()],
    }
    results["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print_queue_table(results["queue_5000"])
    print_table(results)
    print(f"written to {RESULTS.relative_to(ROOT)}")



def queue_5000() -> dict[str, Any]:
    """The admission query's time with 5,000 runs queued, now and as it was (BASELINE_QUERY)."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from creations.models import Creation, Run, RunStatus
    from creations.runs.admission import CANDIDATES_PER_QUERY, SERVED_HORIZON, _admissible_runs
    from workspaces.models import Workspace

    author = User.objects.create_user("queue-5000", password="x")  # noqa: S106 - a throwaway database
    now = timezone.now()
    workspaces = []
    for number in range(50):
        workspace = Workspace.objects.create(name=f"queue {number}", slug=f"queue-{number}", quota_concurrent_runs=2)
        workspaces.append(workspace)
        creations = Creation.objects.bulk_create(
            [Creation(workspace=workspace, author=author, brief="b") for _ in range(200)]
        )
        Run.objects.bulk_create(
            [Run(creation=c, workspace=workspace, version=1, status=RunStatus.QUEUED) for c in creations[:100]]
            + [
                Run(creation=c, workspace=workspace, version=1, status=RunStatus.SUCCEEDED, finished_at=now)
                for c in creations[100:]
            ]
            + [Run(creation=creations[0], workspace=workspace, version=2, status=RunStatus.RUNNING)]
        )
    ids = [w.pk for w in workspaces]
    with connection.cursor() as cursor:  # queued over the last hour; ended runs started over it too
        cursor.execute(
            "UPDATE creations_run SET created_at = now() - (id %% 3600) * interval '1 second' "
            "WHERE workspace_id = ANY(%s) AND status = 'queued'",
            [ids],
        )
        cursor.execute(
            "UPDATE creations_run SET created_at = now() - interval '2 hours', started_at = now() - "
            "(id %% 3000) * interval '1 second' WHERE workspace_id = ANY(%s) AND status <> 'queued'",
            [ids],
        )
        cursor.execute("ANALYZE")

    def baseline() -> list[tuple[int, int]]:
        queued, starting, running = RunStatus.QUEUED.value, RunStatus.STARTING.value, RunStatus.RUNNING.value
        params: list[Any] = [queued, queued, starting, running, queued, timezone.now() - SERVED_HORIZON, queued]
        with connection.cursor() as cursor:
            cursor.execute(BASELINE_QUERY, [*params, CANDIDATES_PER_QUERY])
            return [(int(a), int(b)) for a, b in cursor.fetchall()]

    def timed(query: Any) -> dict[str, Any]:
        samples = []
        for _ in range(QUERY_ROUNDS):
            started = time.perf_counter()
            picked = query()
            samples.append((time.perf_counter() - started) * 1000)
        with CaptureQueriesContext(connection) as queries:
            query()
        return {
            "p50_ms": round(statistics.median(samples), 2),
            "p99_ms": round(percentile(samples, 0.99), 2),
            "queries": len(queries.captured_queries),
            "picked": picked,
        }

    figures: dict[str, Any] = {"queued": Run.objects.filter(workspace_id__in=ids, status=RunStatus.QUEUED).count()}
    for slots, quota in (("a slot free in every workspace", 2), ("every workspace full", 1)):
        Workspace.objects.filter(pk__in=ids).update(quota_concurrent_runs=quota)
        now_query = timed(lambda: _admissible_runs(limit=CANDIDATES_PER_QUERY))
        before = timed(baseline)
        if now_query.pop("picked") != before.pop("picked"):
            raise RuntimeError(f"queue_5000 ({slots}): the query and its baseline picked different runs")
        figures[slots] = {"now": now_query, "baseline": before}
    Workspace.objects.filter(pk__in=ids).delete()  # the worker started next must not run them
    return figures


def print_queue_table(figures: dict[str, Any]) -> None:
    print(f"\nAdmission query with {figures['queued']:,} runs queued (50 workspaces), p50 / p99 ms")
    for slots in ("a slot free in every workspace", "every workspace full"):
        now, before = figures[slots]["now"], figures[slots]["baseline"]
        print(
            f"  {slots:<32} now {now['p50_ms']:>7} / {now['p99_ms']:<7}"
            f" baseline (every active run joined to its creation) {before['p50_ms']:>7} / {before['p99_ms']}"
        )


def phase(model_url: str, name: str, *, workspaces: int, runs_per_workspace: int, quota: int) -> dict[str, Any]:
    """Queue the runs (workspace after workspace, committed together), wait for them all, and measure."""
    from django.contrib.auth.models import User
    from django.db import transaction

    from creations.models import FINAL_STATUSES, Run, RunStatus
    from creations.runs.services import creation_submit
    from workspaces.models import ModelEndpoint
    from workspaces.services import workspace_create

    people = []
    for number in range(workspaces):
        owner = User.objects.create_user(f"{name}-{number}", password="x")  # noqa: S106 - a throwaway database
        workspace = workspace_create(name=f"{name} {number}", owner=owner)
        workspace.quota_concurrent_runs = quota
        workspace.save(update_fields=["quota_concurrent_runs"])
        endpoint = ModelEndpoint.objects.create(
            workspace=workspace, name="scripted", base_url=model_url, model="scripted"
        )
        people.append((workspace, owner, endpoint))
    started = time.monotonic()
    with transaction.atomic():  # the wake-ups go out once all the runs are there
        run_ids = [
            creation_submit(workspace=workspace, author=owner, brief=f"run {n}", model_endpoint=endpoint).pk
            for workspace, owner, endpoint in people
            for n in range(runs_per_workspace)
        ]
    submitted = time.monotonic() - started
    deadline = time.monotonic() + 900
    while Run.objects.filter(pk__in=run_ids).exclude(status__in=FINAL_STATUSES).exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name}: the runs did not finish in 15 minutes")
        time.sleep(0.2)
    elapsed = time.monotonic() - started
    columns = ("status", "created_at", "started_at", "finished_at", "creation__workspace_id")
    rows = [dict(zip(columns, row, strict=True)) for row in Run.objects.filter(pk__in=run_ids).values_list(*columns)]
    measured = measure(rows)
    return {
        "runs": len(rows),
        "succeeded": sum(row["status"] == RunStatus.SUCCEEDED for row in rows),
        "quota_per_workspace": quota,
        "queueing_s": round(submitted, 1),
        "seconds": round(elapsed, 1),
        "runs_per_minute": round(len(rows) / elapsed * 60, 1),
        **measured,
    }


def measure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    started = [row for row in rows if row["started_at"] is not None]
    starts = sorted(row["started_at"] for row in started)
    # A slot freed at each finish while some run still waited: how long until the next run started.
    gaps_ms = []
    for row in started:
        freed = row["finished_at"]
        waiting = any(other["created_at"] <= freed < other["started_at"] for other in started)
        following = bisect.bisect_right(starts, freed)
        if waiting and following < len(starts):
            gaps_ms.append((starts[following] - freed).total_seconds() * 1000)
    waits: dict[int, list[float]] = defaultdict(list)
    first_start: dict[int, float] = {}
    queued_at = min(row["created_at"] for row in rows)
    for row in started:
        workspace = row["creation__workspace_id"]
        waits[workspace].append((row["started_at"] - row["created_at"]).total_seconds())
        since = (row["started_at"] - queued_at).total_seconds()
        first_start[workspace] = min(first_start.get(workspace, since), since)
    medians = [statistics.median(values) for values in waits.values()]
    every_wait = [w for values in waits.values() for w in values]
    return {
        "slot_freed_to_next_start_ms": {
            "p50": round(statistics.median(gaps_ms), 1) if gaps_ms else None,
            "p99": round(percentile(gaps_ms, 0.99), 1) if gaps_ms else None,
            "max": round(max(gaps_ms), 1) if gaps_ms else None,
            "samples": len(gaps_ms),
        },
        "wait_s": {"p50": round(statistics.median(every_wait), 2), "p99": round(percentile(every_wait, 0.99), 2)},
        "workspace_median_wait_s": {
            "min": round(min(medians), 2),
            "max": round(max(medians), 2),
            "spread": round(max(medians) - min(medians), 2),
        },
        "last_workspace_first_start_s": round(max(first_start.values()), 2),
        "most_in_flight": most_in_flight(started),
        "most_in_flight_one_workspace": max(
            most_in_flight([row for row in started if row["creation__workspace_id"] == workspace])
            for workspace in waits
        ),
    }


def most_in_flight(rows: list[dict[str, Any]]) -> int:
    changes = sorted([(row["started_at"], 1) for row in rows] + [(row["finished_at"], -1) for row in rows])
    most = now = 0
    for _, change in changes:  # at the same instant an end (-1) sorts before a start
        now += change
        most = max(most, now)
    return most


def print_table(results: dict[str, Any]) -> None:
    print(
        f"\n{'phase':<20}{'runs':>5}{'quota':>6}{'runs/min':>10}{'freed->start p50':>18}{'p99':>9}"
        f"{'ws median wait min..max':>25}{'spread':>8}{'in flight (one ws)':>20}"
    )
    for name in ("baseline_no_quotas", "quotas", "quotas_binding"):
        data = results[name]
        gap, medians = data["slot_freed_to_next_start_ms"], data["workspace_median_wait_s"]
        print(
            f"{name:<20}{data['runs']:>5}{data['quota_per_workspace']:>6}{data['runs_per_minute']:>10}"
            f"{gap['p50']:>15} ms{gap['p99']:>6} ms"
            f"{medians['min']:>15} s ..{medians['max']:>5} s{medians['spread']:>6} s"
            f"{data['most_in_flight']:>12} ({data['most_in_flight_one_workspace']})"
        )


if __name__ == "__main__":
    main()
