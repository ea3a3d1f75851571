"""Agent benchmark: the same 20-step scripted run through our loop and through
the reference `llm-in-sandbox` CLI, against the same scripted OpenAI-compatible
server and the same sandbox image, under gVisor, in one run.

    .venv/bin/python bench/agent.py [--steps 20] [--model-thinks-ms 50]

The script cycles echo, a small python command and a file write, then
submits. Measured from the server's own clock (monotonic, shared by every
process on the machine):
- per-step overhead: the gap between one model request being answered and
  the next one arriving (everything that is not the model: parsing, running
  the tool in the sandbox, building the next request), median and p90.
  With --model-thinks-ms the model answers each command only after that long, as a real one does:
  the sandbox has been idle meanwhile, and gVisor is slower to take a command after a pause
  (bench/sandbox.py, `wake_after_a_pause`);
- time to the first model request, from process start, and from the run's
  start (for us: a worker that already has Django loaded; for the reference:
  once its imports are done).

Ours runs three ways: the web path (a brief submitted through the run
service, claimed and executed by the worker's code (`run_claim_next`,
`run_execute`) on a PostgreSQL
database of its own: events stored, status moved, artifacts ingested), the
sandbox session alone as a worker would call it, and `manage.py create` as a
person runs it. All three share the sandbox session, so all three overlap
the sandbox's cold start with the first model request. For the web path it
also counts the SQL statements sent per step (every connection of the
process: the run's and the event flusher's).
Writes bench/results/agent.json and prints a table with the ratios.

The reference runs from bench/.venv-reference (`make bench-reference` makes it
with pinned versions; `make bench` does so when it is missing), offline
(LITELLM_LOCAL_MODEL_COST_MAP=True), with gVisor added by bench/reference_gvisor.py.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from bench.measuring import machine  # noqa: E402
from devstack.databases import throwaway_database  # noqa: E402
from devstack.scripted_model import RecordedRequest, ScriptedModel, ScriptEntry, bash, submit  # noqa: E402
from sandboxes.agent import AgentLimits, model_client_for  # noqa: E402
from sandboxes.agent.one_shot import new_run_id, run_one_shot  # noqa: E402
from sandboxes.image import sandbox_image_tag  # noqa: E402
from sandboxes.pool import ColdStartProvider  # noqa: E402

REFERENCE_PYTHON = ROOT / "bench" / ".venv-reference" / "bin" / "python"
REFERENCE_LAUNCHER = ROOT / "bench" / "reference_gvisor.py"
RESULTS = ROOT / "bench" / "results" / "agent.json"
BENCH_DB_SUFFIX = "_bench_agent"
BRIEF = "Benchmark: run the scripted steps."
TARGETS = {"overhead_median_ms": 10.0, "ratio_vs_reference": 15.0, "first_request_s": 1.0}


def scripted_run(steps: int, thinks_s: float = 0.0) -> list[ScriptEntry]:
    """echo, python, file write, ... and submit as the last step; each command's reply given after
    `thinks_s`, as a model that takes time to answer."""
    entries: list[ScriptEntry] = []
    for index in range(steps - 1):
        kind = index % 3
        if kind == 0:
            entries.append(bash(f"echo step {index}", delay=thinks_s))
        elif kind == 1:
            entries.append(bash("python3 -c 'print(sum(range(1000)))'", delay=thinks_s))
        else:
            command = f"printf 'line one\\nline two {index}\\n' > /testbed/output/note-{index}.txt"
            entries.append(bash(command, delay=thinks_s))
    entries.append(submit("benchmark done"))
    return entries


def timings(requests: list[RecordedRequest], started: float, run_started: float | None) -> dict[str, Any]:
    gaps = sorted((after.received_at - before.finished_at) * 1000 for before, after in itertools.pairwise(requests))
    server = [(r.finished_at - r.received_at) * 1000 for r in requests]
    result: dict[str, Any] = {
        "model_requests": len(requests),
        "overhead_ms": {
            "median": round(statistics.median(gaps), 2) if gaps else None,
            "p90": round(gaps[min(len(gaps) - 1, int(len(gaps) * 0.9))], 2) if gaps else None,
            "min": round(gaps[0], 2) if gaps else None,
            "max": round(gaps[-1], 2) if gaps else None,
            "samples": len(gaps),
        },
        "server_ms_median": round(statistics.median(server), 2) if server else None,
        "gaps_ms": [round(gap, 2) for gap in gaps],
        "first_request_from_process_start_s": round(requests[0].received_at - started, 3) if requests else None,
    }
    if run_started is not None and requests:
        result["first_request_from_run_start_s"] = round(requests[0].received_at - run_started, 3)
    return result


def run_ours_in_process(server: ScriptedModel, steps: int, thinks_s: float) -> dict[str, Any]:
    """Our loop as a worker runs it: Django loaded, cold-started sandbox."""
    server.play(scripted_run(steps, thinks_s))
    with tempfile.TemporaryDirectory() as output:
        started = time.monotonic()
        result = run_one_shot(
            provider=ColdStartProvider(),
            model=model_client_for(base_url=server.base_url, model=server.model, api_key="bench"),
            brief=BRIEF,
            limits=AgentLimits(max_steps=steps, command_timeout=60),
            input_files={},
            output_dir=Path(output),
            emit=lambda _event: None,
            cancel=threading.Event(),
            run_id=new_run_id(),
        )
        wall = time.monotonic() - started
        files = len(result.copied.files) if result.copied else 0
    assert result.outcome.reason == "submitted", result.outcome
    return {**timings(server.chat_requests(), started, started), "wall_s": round(wall, 2), "files_out": files}


class StatementCounter:
    """SQL statements sent by every database connection of this process while `counting` (an
    execute wrapper on each connection as it is made: the run's own thread and the event flusher's).
    BEGIN and COMMIT are not statements Django executes, so they are not counted."""

    def __init__(self) -> None:
        self.count = 0
        self.counting = False
        self._lock = threading.Lock()

    def install(self) -> None:
        from django.db import connection
        from django.db.backends.signals import connection_created

        connection_created.connect(self._wrap, weak=False)
        if self not in connection.execute_wrappers:  # this thread's, if it is open already
            connection.execute_wrappers.append(self)

    def _wrap(self, sender: Any, connection: Any, **_: Any) -> None:
        if self not in connection.execute_wrappers:
            connection.execute_wrappers.append(self)

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if self.counting:
            with self._lock:
                self.count += 1
        return execute(sql, params, many, context)


STATEMENTS = StatementCounter()


def run_ours_web(server: ScriptedModel, steps: int, thinks_s: float) -> dict[str, Any]:
    """A brief submitted as a person does, run by the worker's code path (without the queue hop)."""
    from creations.models import Run, RunStatus
    from creations.runs.admission import run_claim_next
    from creations.runs.execution import run_execute
    from creations.runs.services import creation_submit

    server.play(scripted_run(steps, thinks_s))
    workspace, author, endpoint = _bench_workspace(server)
    with patch("creations.runs.queue.send_wake_up"):  # executed right here, as the worker would
        run = creation_submit(workspace=workspace, author=author, brief=BRIEF, model_endpoint=endpoint, max_steps=steps)
    started = time.monotonic()
    STATEMENTS.count, STATEMENTS.counting = 0, True
    try:
        assert run_claim_next(worker="bench") == run.pk
        run_execute(run_id=run.pk)
        wall = time.monotonic() - started
        time.sleep(0.3)  # what the flusher still stores of the run (held events wait about 100 ms)
    finally:
        STATEMENTS.counting = False
    run = Run.objects.get(pk=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.reason
    files = run.artifacts.count()
    requests = server.chat_requests()
    return {
        **timings(requests, started, started),
        "wall_s": round(wall, 2),
        "files_out": files,
        "db_statements_per_step": round(STATEMENTS.count / max(1, len(requests)), 1),
    }


def _bench_workspace(server: ScriptedModel) -> tuple[Any, Any, Any]:
    from django.contrib.auth.models import User

    from workspaces.models import ModelEndpoint, Workspace

    author = User.objects.get_or_create(username="bench")[0]
    workspace = Workspace.objects.get(memberships__user=author, is_personal=True)
    endpoint = ModelEndpoint.objects.update_or_create(
        workspace=workspace, name="scripted", defaults={"base_url": server.base_url, "model": server.model}
    )[0]
    return workspace, author, endpoint


def run_ours_cli(server: ScriptedModel, steps: int, thinks_s: float) -> dict[str, Any]:
    """`manage.py create` as a person runs it."""
    server.play(scripted_run(steps, thinks_s))
    with tempfile.TemporaryDirectory() as output:
        argv = [sys.executable, "manage.py", "create", BRIEF, "--output", output, "--max-steps", str(steps)]
        argv += ["--model", server.model, "--base-url", server.base_url, "--api-key", "bench", "--no-color"]
        started = time.monotonic()
        finished = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
        wall = time.monotonic() - started
        files = len(list(Path(output).glob("*")))
    if finished.returncode != 0:
        raise RuntimeError(f"our CLI failed: {finished.stderr[-2000:]}")
    return {**timings(server.chat_requests(), started, None), "wall_s": round(wall, 2), "files_out": files}


def run_reference(server: ScriptedModel, steps: int, image: str, thinks_s: float) -> dict[str, Any]:
    server.play(scripted_run(steps, thinks_s))
    with tempfile.TemporaryDirectory() as output:
        argv = [str(REFERENCE_PYTHON), str(REFERENCE_LAUNCHER), "run", "--query", BRIEF]
        argv += ["--llm_name", server.model, "--llm_base_url", server.base_url, "--api_key", "bench"]
        argv += ["--docker_image", image, "--max_steps", str(steps), "--output_dir", output]
        environment = {
            **os.environ,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "REFERENCE_RUNTIME": settings.SANDBOX_RUNTIME,
        }
        environment.pop("DJANGO_SETTINGS_MODULE", None)
        started = time.monotonic()
        finished = subprocess.run(
            argv, cwd=output, env=environment, capture_output=True, text=True, timeout=900, check=False
        )
        wall = time.monotonic() - started
        files = len(list(Path(output).glob("*/files/*")))
    run_started = None
    for line in finished.stderr.splitlines():
        if line.startswith("RUN_START "):
            run_started = float(line.split()[1])
    requests = server.chat_requests()
    if finished.returncode != 0 or len(requests) < steps:
        raise RuntimeError(
            f"the reference failed (exit {finished.returncode}, {len(requests)} requests): {finished.stderr[-3000:]}"
        )
    return {**timings(requests, started, run_started), "wall_s": round(wall, 2), "files_out": files}


def pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The step gaps of every run together; first-request and wall times as medians."""
    gaps = sorted(gap for run in runs for gap in run["gaps_ms"])
    result: dict[str, Any] = {
        "runs": len(runs),
        "model_requests_per_run": [run["model_requests"] for run in runs],
        "overhead_ms": {
            "median": round(statistics.median(gaps), 2),
            "p90": round(gaps[min(len(gaps) - 1, int(len(gaps) * 0.9))], 2),
            "min": gaps[0],
            "max": gaps[-1],
            "samples": len(gaps),
            "median_per_run": [run["overhead_ms"]["median"] for run in runs],
        },
        "wall_s": round(statistics.median(run["wall_s"] for run in runs), 2),
        "files_out_per_run": [run["files_out"] for run in runs],
    }
    if all("db_statements_per_step" in run for run in runs):
        result["db_statements_per_step"] = [run["db_statements_per_step"] for run in runs]
    for key in ("first_request_from_process_start_s", "first_request_from_run_start_s"):
        values = [run[key] for run in runs if run.get(key) is not None]
        if values:
            result[key] = round(statistics.median(values), 3)
            result[f"{key}_per_run"] = values
    return result


def ratio(reference: float | None, ours: float | None) -> float | None:
    if not reference or not ours:
        return None
    return round(reference / ours, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each variant; their step gaps are pooled")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument(
        "--model-thinks-ms",
        type=float,
        default=0.0,
        help="the model answers each command this long after it is asked, as a real one does; the figures "
        "go to agent-model-thinks-<N>ms.json",
    )
    args = parser.parse_args()
    thinks_s = args.model_thinks_ms / 1000
    results_path = (
        RESULTS
        if not args.model_thinks_ms
        else RESULTS.with_name(f"agent-model-thinks-{args.model_thinks_ms:g}ms.json")
    )
    image = sandbox_image_tag()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in ("ours_web", "ours_in_process", "ours_cli")}
    runs["reference_cli"] = []
    skipped = ""
    if args.skip_reference:
        skipped = "--skip-reference"
    elif not REFERENCE_PYTHON.exists():
        sys.exit(f"no reference virtualenv at {REFERENCE_PYTHON.relative_to(ROOT)}: `make bench-reference` makes it")
    STATEMENTS.install()
    with ScriptedModel() as server, throwaway_database(BENCH_DB_SUFFIX):
        for _ in range(args.repeats):  # interleaved, so a busy moment on the machine hits every variant
            runs["ours_web"].append(run_ours_web(server, args.steps, thinks_s))
            runs["ours_in_process"].append(run_ours_in_process(server, args.steps, thinks_s))
            runs["ours_cli"].append(run_ours_cli(server, args.steps, thinks_s))
            if skipped:
                continue
            try:
                runs["reference_cli"].append(run_reference(server, args.steps, image, thinks_s))
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                skipped = f"failed: {error}"
    results: dict[str, Any] = {name: pooled(samples) for name, samples in runs.items() if samples}
    if skipped:
        results["reference_cli"] = {"skipped": skipped}

    ours, reference = results["ours_cli"], results["reference_cli"]
    ours_median = ours["overhead_ms"]["median"]
    reference_median = reference.get("overhead_ms", {}).get("median")
    summary: dict[str, Any] = {
        "overhead_ratio_median": ratio(reference_median, ours_median),
        "overhead_ratio_p90": ratio(reference.get("overhead_ms", {}).get("p90"), ours["overhead_ms"]["p90"]),
        "first_request_ratio_from_process_start": ratio(
            reference.get("first_request_from_process_start_s"), ours["first_request_from_process_start_s"]
        ),
        "targets": TARGETS,
    }
    summary["meets_targets"] = {
        "overhead_median": ours_median <= TARGETS["overhead_median_ms"],
        "ratio_vs_reference": (summary["overhead_ratio_median"] or 0) >= TARGETS["ratio_vs_reference"],
        "first_request_from_run_start": results["ours_web"]["first_request_from_run_start_s"]
        <= TARGETS["first_request_s"],
    }
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "runtime": settings.SANDBOX_RUNTIME,
        "image": image,
        "steps": args.steps,
        "model_thinks_ms": args.model_thinks_ms,
        "script": "cycle of: echo; python3 -c 'print(sum(range(1000)))'; printf > /testbed/output/note-N.txt; "
        "then submit as the last step",
        "results": results,
        "summary": summary,
    }
    results_path.parent.mkdir(parents=True, exist_ok=True)
    results_path.write_text(json.dumps(report, indent=2) + "\n")
    print_table(results, summary)
    print(f"\nwrote {results_path.relative_to(ROOT)}")


def print_table(results: dict[str, Any], summary: dict[str, Any]) -> None:
    def cell(value: Any, unit: str = "") -> str:
        return "—" if value is None else f"{value}{unit}"

    print(f"{'run':<18}{'overhead p50':>14}{'overhead p90':>14}{'1st req (proc)':>16}{'1st req (run)':>15}{'wall':>8}")
    for name, data in results.items():
        if "overhead_ms" not in data:
            print(f"{name:<18}{next(iter(data.values()))}")
            continue
        print(
            f"{name:<18}{cell(data['overhead_ms']['median'], ' ms'):>14}{cell(data['overhead_ms']['p90'], ' ms'):>14}"
            f"{cell(data.get('first_request_from_process_start_s'), ' s'):>16}"
            f"{cell(data.get('first_request_from_run_start_s'), ' s'):>15}{cell(data['wall_s'], ' s'):>8}"
        )
    print(
        f"\nreference / ours (CLI): overhead median x{cell(summary['overhead_ratio_median'])}, "
        f"p90 x{cell(summary['overhead_ratio_p90'])}, "
        f"first request x{cell(summary['first_request_ratio_from_process_start'])}"
    )
    print(f"targets met: {summary['meets_targets']}")
    if "db_statements_per_step" in results.get("ours_web", {}):
        print(f"web path: SQL statements per step, each run: {results['ours_web']['db_statements_per_step']}")


if __name__ == "__main__":
    main()
