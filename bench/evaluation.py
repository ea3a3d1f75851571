"""Evaluation benchmark: one 100-task suite evaluated by Atelier in sandbox mode and in plain mode,
and the same 100 tasks through the reference `llm-in-sandbox benchmark` command
(`--mode llm-in-sandbox` and `--mode llm`), against the same scripted model, in one run.

    DATABASE_URL=postgres://... .venv/bin/python bench/evaluation.py [--concurrency 4]

The suite and the model's behaviour are bench/evaluation_suite.py: a deterministic data.json in
the reference's task layout, which Atelier's suites read as it is; every sandbox task is two model
steps (a shell command writing /testbed/output/answer.txt, then submit), every plain task one
completion. Atelier runs as deployed: its stack (daphne, a Celery worker of 4 threads per core,
beat) on a PostgreSQL database and a Redis of its own, gVisor sandboxes cold-started (no pool),
the evaluation started by its service as the API does and followed in the database. The
reference runs from bench/.venv-reference (`make bench-reference`), its containers under the same
gVisor runtime and from the same sandbox image (bench/reference_benchmark.py), offline.

Both sides get the same concurrency: the workspace's `quota_concurrent_runs` (what an evaluation
keeps in flight) and the reference's `--num_workers`.

Figures per side and mode: the whole evaluation's wall time (Atelier: evaluation created ->
finished, on a running stack; the reference: its own timer over the problems, and its process from
start to exit), each task's time p50/p90 (Atelier: released -> scored; the reference: its
per-problem function from start to end), and the score, which must be the same on both sides.
Writes bench/results/evaluation.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

import docker  # noqa: E402
from django.conf import settings  # noqa: E402
from django.test import override_settings  # noqa: E402

from bench import evaluation_suite as suite  # noqa: E402
from bench.measuring import BENCH_ENV, machine, machine_speed, percentile, sandbox_priority  # noqa: E402
from devstack.databases import database_url, throwaway_database  # noqa: E402
from devstack.scripted_model import ScriptedModel  # noqa: E402
from devstack.stack import stack_running  # noqa: E402
from sandboxes.image import sandbox_image_tag  # noqa: E402

REFERENCE_VENV = ROOT / "bench" / ".venv-reference"
REFERENCE_PYTHON = REFERENCE_VENV / "bin" / "python"
REFERENCE_LAUNCHER = ROOT / "bench" / "reference_benchmark.py"
RESULTS = ROOT / "bench" / "results" / "evaluation.json"
BENCH_DB_SUFFIX = "_bench_evaluation"
MODES = {"sandbox": "llm-in-sandbox", "plain": "llm"}  # Atelier's mode -> the reference's --mode
TASK_TIME = re.compile(r"TASK_TIME \S+ ([\d.]+) ([\d.]+)")
RUN_START = re.compile(r"RUN_START ([\d.]+)")
MAX_STEPS = 5  # each sandbox task takes 2; a task that takes more is a failure to see, not to wait for

COMPARED = (
    "The same 100 tasks (bench/evaluation_suite.py, one data.json in the reference's task layout) and the same "
    "scripted model over HTTP, in sandbox mode and plain mode on each side. Atelier: an evaluation started by its "
    "service (as the API does) on its running stack (daphne, a Celery worker, beat, PostgreSQL, Redis), every "
    "sandbox task a run (queued, cold-started gVisor sandbox, events and artifacts stored, answer.txt read and "
    "scored), every plain task a Celery task making one completion; timed from the evaluation's creation to its "
    "end, each task from its release to its score. The reference: `llm-in-sandbox benchmark --task <dir> "
    "--mode llm-in-sandbox|llm` (v0.2.0) with its demo task's config.yaml and reward.py reading that data.json, a "
    "vanilla_llm_prompt.py embedding the input files as Atelier's plain mode does, its containers from the same "
    "image under the same gVisor runtime (bench/reference_benchmark.py); timed by its own timer over the "
    "problems (and its process, start to exit), each problem by its runner's per-problem function. Same "
    "concurrency both sides (quota_concurrent_runs = --num_workers). Not compared: the reference's own data sets "
    "(Hugging Face downloads) and its cdx123/llm-in-sandbox image (not pulled: the same image for both instead)."
)


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def spread(seconds: list[float]) -> dict[str, Any]:
    if not seconds:
        return {"tasks": 0}
    return {
        "tasks": len(seconds),
        "p50_s": round(percentile(seconds, 0.5), 3),
        "p90_s": round(percentile(seconds, 0.9), 3),
        "max_s": round(max(seconds), 3),
    }


# --- Atelier ---------------------------------------------------------------------------------------


def atelier_setup(server: ScriptedModel, concurrency: int) -> tuple[Any, Any, Any, Any]:
    """The bench's person, workspace (its quota = the concurrency), model and the uploaded suite."""
    from django.contrib.auth.models import User

    from creations.evaluations.suites import suite_upload
    from workspaces.models import ModelEndpoint, Workspace

    person = User.objects.create_user("bench-evaluation", password="x")  # noqa: S106 - a throwaway database
    workspace = Workspace.objects.get(memberships__user=person, is_personal=True)
    workspace.quota_concurrent_runs = concurrency
    workspace.save(update_fields=["quota_concurrent_runs"])
    endpoint = ModelEndpoint.objects.create(
        workspace=workspace, name="scripted", base_url=server.base_url, model=server.model
    )
    uploaded = suite_upload(workspace=workspace, user=person, name="bench", data=suite.suite_bytes())
    warm_up = suite_upload(
        workspace=workspace, user=person, name="warm-up", data=json.dumps(suite.tasks()[2:4]).encode()
    )
    return workspace, person, endpoint, (uploaded, warm_up)


def atelier_evaluate(
    workspace: Any, person: Any, endpoint: Any, suite_row: Any, mode: str, timeout: float
) -> dict[str, Any]:
    from creations.evaluations.models import Evaluation, EvaluationStatus, ItemStatus
    from creations.evaluations.services import evaluation_cancel, evaluation_start

    load_before = load_average()
    started = time.monotonic()
    evaluation = evaluation_start(workspace=workspace, user=person, suite=suite_row, endpoints=[endpoint], modes=mode)
    while Evaluation.objects.filter(pk=evaluation.pk, status=EvaluationStatus.RUNNING).exists():
        if time.monotonic() - started > timeout:  # cancelled, so it takes no time from the next phases;
            evaluation_cancel(evaluation=evaluation, user=person)  # what it scored so far is reported
            break
        time.sleep(0.1)
    observed = time.monotonic() - started
    evaluation.refresh_from_db()
    assert evaluation.finished_at is not None, "an evaluation that ended has its end time"
    items = list(evaluation.items.select_related("run"))
    settled = [i for i in items if i.status in (ItemStatus.SCORED, ItemStatus.FAILED)]  # not those cancelled
    per_task = [(i.finished_at - i.started_at).total_seconds() for i in settled if i.finished_at and i.started_at]
    result: dict[str, Any] = {
        "status": f"cancelled at {timeout:.0f} s" if evaluation.status == "cancelled" else evaluation.status,
        "wall_s": round((evaluation.finished_at - evaluation.created_at).total_seconds(), 2),
        "wall_observed_s": round(observed, 2),
        "per_task": spread(per_task),
        "correct": sum(1 for i in items if i.correct),
        "scored": sum(1 for i in items if i.status == ItemStatus.SCORED),
        "failed": [f"{i.task.task_id}: {i.why}" for i in items if i.status == ItemStatus.FAILED][:5],
        "load_average_before": load_before,
        "load_average_after": load_average(),
    }
    runs = [i.run for i in items if i.run is not None and i.run.started_at and i.run.finished_at]
    if runs:
        result["breakdown"] = sandbox_breakdown(items, runs)
    return result


def sandbox_breakdown(items: list[Any], runs: list[Any]) -> dict[str, Any]:
    """Where a sandbox task's time goes: waiting for a worker thread; the agent (sandbox started,
    model steps, commands) until its `finished` event; then the run's end (the outputs copied out
    and stored, the sandbox released; an evaluation's task keeps no snapshot and gets no previews)."""
    from creations.models import RunEvent

    agent_done = dict(
        RunEvent.objects.filter(run__in=runs, kind="finished").values_list("run_id", "created_at").order_by()
    )
    waits = [(i.run.started_at - i.started_at).total_seconds() for i in items if i.run and i.run.started_at]
    agent = [(agent_done[r.pk] - r.started_at).total_seconds() for r in runs if r.pk in agent_done]
    ending = [(r.finished_at - agent_done[r.pk]).total_seconds() for r in runs if r.pk in agent_done]
    return {
        "released_to_run_start": spread(waits),
        "run_start_to_agent_finished": spread(agent),
        "agent_finished_to_run_end": spread(ending),
    }


def remove_sandboxes(host_id: str) -> int:
    """The stack's sandboxes left running when the bench stops early (its janitor stops with it)."""
    from sandboxes.container_spec import LABEL_HOST

    containers = docker.from_env().containers.list(all=True, filters={"label": f"{LABEL_HOST}={host_id}"})
    for container in containers:
        container.remove(force=True)
    return len(containers)


# --- the reference ---------------------------------------------------------------------------------


def reference_evaluate(
    server: ScriptedModel, task_dir: Path, mode: str, image: str, concurrency: int, timeout: float
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="reference-benchmark-") as output:
        argv = [str(REFERENCE_PYTHON), str(REFERENCE_LAUNCHER), "benchmark", "--task", str(task_dir)]
        argv += ["--mode", MODES[mode], "--num_workers", str(concurrency), "--max_steps", str(MAX_STEPS)]
        argv += ["--llm_name", server.model, "--llm_base_url", server.base_url, "--api_key", "bench"]
        argv += ["--docker_image", image, "--output_dir", output]
        environment = {
            **os.environ,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # offline: no model price list fetched
            "HF_DATASETS_OFFLINE": "1",  # the data.json is local: nothing from the Hugging Face hub
            "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(Path(output) / "hf"),
            "REFERENCE_RUNTIME": settings.SANDBOX_RUNTIME,
        }
        environment.pop("DJANGO_SETTINGS_MODULE", None)
        load_before = load_average()
        started = time.monotonic()
        finished = run_reference(argv, output, environment, image, timeout)
        process_wall = time.monotonic() - started
        found = sorted(Path(output).glob("**/results.json"))
        if finished.returncode != 0 or not found:
            raise RuntimeError(f"exit {finished.returncode}: {finished.stderr[-3000:]}")
        own = json.loads(found[0].read_text())
        trajectories = json.loads((found[0].parent / "trajectory.json").read_text())
    # Anywhere in its stderr: its progress bar writes lines that end in a carriage return, not a newline.
    per_task = [float(end) - float(start) for start, end in TASK_TIME.findall(finished.stderr)]
    found_start = RUN_START.search(finished.stderr)
    run_started = float(found_start[1]) if found_start else None
    return {
        "wall_s": round(own["elapsed_time_seconds"], 2),
        "process_wall_s": round(process_wall, 2),
        "imports_s": round(run_started - started, 2) if run_started else None,
        "per_task": spread(per_task),
        "correct": sum(1 for t in trajectories.values() if t["reward"] == 1.0),
        "errors": own["num_errors"],
        "load_average_before": load_before,
        "load_average_after": load_average(),
    }


def run_reference(argv: list[str], cwd: str, env: dict[str, str], image: str, timeout: float) -> Any:
    """The reference's command, in a session of its own: on SIGINT or SIGTERM it stops every container
    of its image (`_cleanup_docker_containers`), which here is every Atelier sandbox on the machine,
    so no signal of ours reaches it. Stopped early, it is killed with its workers, and its own
    containers (named after the image) are removed."""
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        prefix = image.replace("/", "-").replace(":", "-") + "-"
        for container in docker.from_env().containers.list(all=True, filters={"name": prefix}):
            if (container.name or "").startswith(prefix):
                container.remove(force=True)
        raise
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


# --- the run ---------------------------------------------------------------------------------------


def phase(name: str, server: ScriptedModel, measure: Any) -> dict[str, Any]:
    before = len(server.chat_requests())
    try:
        result = measure()
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        result = {"skipped": f"failed: {str(error)[-2000:]}"}
    result["model_requests"] = len(server.chat_requests()) - before
    print(name, json.dumps(result), flush=True)
    return result


def measure(server: ScriptedModel, args: argparse.Namespace, image: str, task_dir: Path) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    workspace, person, endpoint, (suite_row, warm_up) = atelier_setup(server, args.concurrency)
    # The platform is a running service: its first runs (imports, connections) are not what a
    # team waits for on its hundredth evaluation. The reference's command starts cold each time.
    for mode in MODES:
        atelier_evaluate(workspace, person, endpoint, warm_up, mode, args.timeout)
    for mode in MODES:  # interleaved, so a busy moment on the shared machine hits both sides
        results[f"atelier_{mode}"] = phase(
            f"atelier_{mode}", server,
            lambda mode=mode: atelier_evaluate(workspace, person, endpoint, suite_row, mode, args.timeout),
        )  # fmt: skip
        if args.skip_reference:
            results[f"reference_{mode}"] = {"skipped": "--skip-reference"}
            continue
        results[f"reference_{mode}"] = phase(
            f"reference_{mode}", server,
            lambda mode=mode: reference_evaluate(server, task_dir, mode, image, args.concurrency, args.timeout),
        )  # fmt: skip
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=4, help="tasks in flight at once, on both sides")
    parser.add_argument("--timeout", type=float, default=600, help="seconds any one evaluation may take")
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args()
    if not args.skip_reference and not REFERENCE_PYTHON.exists():
        sys.exit(f"no reference virtualenv at {REFERENCE_PYTHON.relative_to(ROOT)}: `make bench-reference` makes it")
    image = sandbox_image_tag()
    facts = {**machine(), "runtime": settings.SANDBOX_RUNTIME, "image": image, "load_average_at_start": load_average()}
    # Atelier's sandboxes run under a low-weight parent cgroup, as deployed; the reference's containers
    # at Docker's default weight: on a machine busy with other work, that is a difference in what each gets.
    facts["atelier_sandbox_cpu_priority"] = sandbox_priority(settings.SANDBOX_CGROUP_PARENT)
    speed_before = machine_speed()
    workdir = Path(tempfile.mkdtemp(prefix="atelier-bench-evaluation-"))
    package = next(REFERENCE_VENV.glob("lib/python3*/site-packages/llm_in_sandbox"), REFERENCE_VENV)
    task_dir = suite.write_reference_task(package, workdir / "reference-task")
    (workdir / "stack").mkdir()
    stack_host = ""
    try:
        with (
            ScriptedModel(model="scripted-eval", exhausted=suite.scripted_answer) as server,
            throwaway_database(BENCH_DB_SUFFIX),
            stack_running(
                workdir / "stack",
                database_url=database_url(),
                env_overrides=BENCH_ENV,
                worker_threads=4 * (os.cpu_count() or 1),
            ) as stack,
            override_settings(MEDIA_ROOT=stack.media_root),  # the suite's files where the stack's worker reads them
        ):
            stack_host = stack.host_id
            results = measure(server, args, image, task_dir)
    finally:
        if stack_host and (left := remove_sandboxes(stack_host)):
            print(f"removed {left} sandboxes the stack left", flush=True)
    shutil.rmtree(workdir)  # kept, with the stack's logs, when the bench fails
    facts["python_loop_10m_s_before_and_after"] = [speed_before, machine_speed()]
    facts["load_average_at_end"] = load_average()
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": facts,
        "compared": COMPARED,
        "suite": {
            "tasks": suite.TASKS,
            "sha256_16": suite.suite_digest(),
            "with_input_file": sum(1 for n in range(1, suite.TASKS + 1) if suite.has_file(n)),
            "expected_correct": suite.EXPECTED_CORRECT,
        },
        "concurrency": args.concurrency,
        "results": results,
        "summary": summary(results),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_table(results, report["summary"])
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


def summary(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """reference / Atelier per mode (over 1: Atelier is faster), and whether both scored as scripted."""
    out: dict[str, Any] = {}
    for mode in MODES:
        ours, theirs = results[f"atelier_{mode}"], results[f"reference_{mode}"]
        out[f"{mode}_scores_as_scripted"] = {
            "atelier": ours.get("correct") == suite.EXPECTED_CORRECT[mode],
            "reference": theirs.get("correct") == suite.EXPECTED_CORRECT[mode] if "correct" in theirs else None,
        }
        if ours.get("status") == "finished" and "wall_s" in theirs:  # a cancelled one's wall is its timeout
            out[f"{mode}_wall_ratio"] = round(theirs["wall_s"] / ours["wall_s"], 2)
            out[f"{mode}_per_task_p50_ratio"] = round(theirs["per_task"]["p50_s"] / ours["per_task"]["p50_s"], 2)
    return out


def print_table(results: dict[str, dict[str, Any]], summary_: dict[str, Any]) -> None:
    print(
        f"\n{'side, mode':<20}{'wall':>9}{'process':>9}{'task p50':>10}{'task p90':>10}{'correct':>9}{'requests':>10}"
    )
    for name, data in results.items():
        if "wall_s" not in data:
            print(f"{name:<20}{data.get('skipped', '')[:200]}")
            continue
        process = f"{data['process_wall_s']} s" if "process_wall_s" in data else "—"
        task = data["per_task"]
        print(
            f"{name:<20}{data['wall_s']:>7} s{process:>9}{task['p50_s']:>8} s{task['p90_s']:>8} s"
            f"{data['correct']:>5}/{suite.TASKS}{data['model_requests']:>10}  {data.get('status', '')}"
        )
    print(f"\nreference / Atelier: {json.dumps(summary_)}")


if __name__ == "__main__":
    main()
