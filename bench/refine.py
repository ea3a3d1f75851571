"""Refine benchmark: what continuing from a previous version costs.

    DATABASE_URL=postgres://... .venv/bin/python bench/refine.py [--rounds 5]

1. Latency of a refine whose previous version left 50 MB in /testbed, against a
   first version, in the same run: from the service call (refine, or submit) to
   the model's first request, and to the first command's result (the sandbox
   started and, for the refine, the previous /testbed restored). The run is
   executed in this process as a worker executes it (the queue's wake-up, the
   same for both, is left out), against a scripted OpenAI-compatible model over
   HTTP and a real gVisor sandbox.
2. Snapshot save and restore, time and compressed size, for 1 MB, 50 MB and
   500 MB trees (half incompressible bytes, half text), beside the plain tar
   stream of the same tree through the same exec connection (uncompressed, the
   way output is copied out). `docker cp` is not a baseline: it reads the
   container's root file system, and /testbed is a tmpfs it does not see (it
   "copies" an empty directory, exit 0).

Prints the figures and writes bench/results/refine.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from bench.measuring import machine_speed  # noqa: E402 - beside this file

RESULTS = ROOT / "bench" / "results" / "refine.json"
MB = 1024 * 1024
FILL = (
    "mkdir -p /testbed/work /testbed/output && cd /testbed/work && "
    "head -c {half} /dev/urandom > data.bin && head -c {quarter} /dev/urandom | base64 -w 100 > notes.txt && "
    "echo ok > /testbed/output/result.txt"
)


def fill_command(size: int) -> str:
    return FILL.format(half=size // 2, quarter=size * 3 // 8)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


# --- 2. snapshots -------------------------------------------------------------------


def snapshot_figures(sizes_mb: list[int]) -> list[dict[str, Any]]:
    from sandboxes.docker_runtime import SandboxConfig, start_sandbox

    config = SandboxConfig.from_settings()
    figures = []
    for size_mb in sizes_mb:
        source = start_sandbox({"atelier.owner": "bench", "atelier.run_id": "bench"}, config=config)
        target = start_sandbox({"atelier.owner": "bench", "atelier.run_id": "bench"}, config=config)
        try:
            filled = source.run_command(fill_command(size_mb * MB), timeout=600)
            assert filled.exit_code == 0, filled.output
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                plain = source.copy_out(Path(tmp), src="/testbed")
                plain_seconds = time.perf_counter() - started
                plain_bytes = sum(f.size for f in plain.files)
            with tempfile.TemporaryFile() as spool:
                started = time.perf_counter()
                report = source.save_snapshot(spool, max_bytes=2 * size_mb * MB + MB)
                save_seconds = time.perf_counter() - started
                assert report is not None
                assert report.whole
                spool.seek(0)
                started = time.perf_counter()
                target.restore_snapshot(spool, size=report.size)
                restore_seconds = time.perf_counter() - started
            check = target.run_command("du -sb /testbed | cut -f1", timeout=60)
            figures.append(
                {
                    "tree_mb": size_mb,
                    "restored_bytes": int(check.output.strip() or 0),
                    "snapshot_mb": round(report.size / MB, 1),
                    "save_ms": ms(save_seconds),
                    "restore_ms": ms(restore_seconds),
                    "plain_tar_out_ms": ms(plain_seconds),
                    "plain_tar_mb": round(plain_bytes / MB, 1),
                }
            )
        finally:
            source.stop()
            target.stop()
    return figures


# --- 1. refine latency --------------------------------------------------------------


def latency_figures(rounds: int) -> dict[str, Any]:
    from django.contrib.auth.models import User
    from django.db import connections

    from creations.models import Run, RunEvent, RunStatus
    from creations.runs.execution import run_execute
    from creations.runs.services import creation_submit, run_refine
    from creations.runs.state import run_mark_starting
    from devstack.databases import throwaway_database
    from devstack.scripted_model import ScriptedModel, bash, submit
    from workspaces.models import ModelEndpoint
    from workspaces.services import workspace_create

    first_request: dict[str, float] = {}

    def answer(body: dict[str, Any]) -> Any:
        messages = body.get("messages", [])
        task = json.dumps(messages)
        found = re.search(r"(?:ROUND|FIRST)-[0-9]+", task)
        if found:
            first_request.setdefault(found.group(0), time.perf_counter())
        acted = sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))
        if found is None and acted == 0:  # the first version, which fills /testbed
            return bash(fill_command(50 * MB))
        return bash("ls /testbed > /dev/null") if acted == 0 else submit("done")

    model = ScriptedModel(exhausted=answer).start()

    def execute_and_disconnect(run_id: int) -> None:
        try:
            run_execute(run_id=run_id)
        finally:
            connections.close_all()

    def execute(run: Run) -> None:
        assert run_mark_starting(run_id=run.pk, worker="bench")
        worker = threading.Thread(target=execute_and_disconnect, args=(run.pk,))
        worker.start()
        worker.join()

    def first_command_at(run: Run) -> float:
        event = RunEvent.objects.filter(run=run, kind="tool_result").order_by("seq").first()
        assert event is not None
        return event.created_at.timestamp()

    names = ("first_request", "first_command", "refine_request", "refine_command")
    results: dict[str, list[float]] = {name: [] for name in names}
    with throwaway_database("_bench_refine"):
        owner = User.objects.create_user("bench-owner")
        workspace = workspace_create(name="Bench", slug="bench", owner=owner)
        endpoint = ModelEndpoint.objects.create(
            workspace=workspace, name="scripted", base_url=model.base_url, model=model.model
        )
        v1 = creation_submit(workspace=workspace, author=owner, brief="FILL the testbed", model_endpoint=endpoint)
        execute(v1)
        v1.refresh_from_db()
        assert v1.status == RunStatus.SUCCEEDED, v1.reason
        kept = RunEvent.objects.get(run=v1, kind="snapshot").payload
        assert kept["size"], kept["note"]
        snapshot_mb = round(kept["size"] / MB, 1)
        for index in range(rounds):
            for kind in ("first", "refine"):
                marker = f"{'FIRST' if kind == 'first' else 'ROUND'}-{index}"
                started_wall, started = time.time(), time.perf_counter()
                if kind == "first":
                    run = creation_submit(workspace=workspace, author=owner, brief=marker, model_endpoint=endpoint)
                else:
                    run = run_refine(run=v1, user=owner, instruction=marker)
                execute(run)
                run.refresh_from_db()
                assert run.status == RunStatus.SUCCEEDED, run.reason
                results[f"{kind}_request"].append(first_request[marker] - started)
                results[f"{kind}_command"].append(first_command_at(run) - started_wall)
    model.stop()
    return {
        "snapshot_mb": snapshot_mb,
        "rounds": rounds,
        **{f"{name}_p50_ms": ms(statistics.median(samples)) for name, samples in results.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="1,50,500", help="tree sizes in MB for the snapshot figures")
    args = parser.parse_args()
    speed = machine_speed()
    latency = latency_figures(args.rounds)
    print(f"refine from a {latency['snapshot_mb']} MB snapshot, p50 over {args.rounds} rounds (ms):")
    for label, name in (("the first model request", "request"), ("the first command's result", "command")):
        refine, first = latency[f"refine_{name}_p50_ms"], latency[f"first_{name}_p50_ms"]
        print(f"  to {label}: refine {refine}, first version {first}")
    snapshots = snapshot_figures([int(s) for s in args.sizes.split(",")])
    print("snapshots (ms; MB):")
    for row in snapshots:
        print(
            f"  {row['tree_mb']:>4} MB tree: save {row['save_ms']} -> {row['snapshot_mb']} MB,"
            f" restore {row['restore_ms']}; plain tar out {row['plain_tar_out_ms']} ({row['plain_tar_mb']} MB)"
        )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "loop_seconds": speed},
                "latency": latency,
                "snapshots": snapshots,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
