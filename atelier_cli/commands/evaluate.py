"""`atelier eval SUITE.jsonl --model A --model B --mode both --wait`: upload a suite, start an
evaluation of it against the named models, and (with --wait) follow it to the end and print the
results table: per model and mode, the accuracy with its 95% interval, mean tokens and time, and
the sandbox minus plain difference."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from atelier_cli.answers import (
    EVALUATION,
    EVALUATION_RESULTS,
    LANGUAGE_MODELS,
    SUITE,
    Evaluation,
    EvaluationResults,
)
from atelier_cli.api_client import ApiClient
from atelier_cli.commands.common import add_json_option, api_client
from atelier_cli.errors import CliError
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import notice, print_document, print_line
from atelier_cli.terminal import one_line
from atelier_cli.workspaces import default_workspace_slug

HELP = "Evaluate models on a suite of tasks, with a sandbox and without, and print the results."
POLL_SECONDS = 2.0
COLUMNS = ("MODEL", "MODE", "ACCURACY", "95% INTERVAL", "CORRECT", "MEAN TOKENS", "MEAN TIME", "SANDBOX-PLAIN")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("eval", help=HELP, description=HELP + " Prints the evaluation's id and address.")
    parser.add_argument("suite", type=Path, help="the task file: JSON Lines, one task per line")
    parser.add_argument("--files", metavar="ZIP", type=Path, help="a zip of the input files the tasks name")
    parser.add_argument("--name", default="", help="the suite's name (default: the file's name)")
    parser.add_argument(
        "--model",
        metavar="NAME",
        action="append",
        default=[],
        required=True,
        help="a model of the workspace, by its name or id (repeat for up to four)",
    )
    parser.add_argument("--mode", choices=("sandbox", "plain", "both"), default="both", help="default: both")
    parser.add_argument("--workspace", metavar="SLUG", help="where it runs (default: your personal workspace)")
    parser.add_argument("--wait", action="store_true", help="follow it to the end and print the results table")
    add_json_option(parser, "the evaluation (with --wait: its results)")
    parser.set_defaults(func=run)


def _model_ids(client: ApiClient, workspace: str, names: list[str]) -> list[int | None]:
    models = client.get(f"/workspaces/{workspace}/models", LANGUAGE_MODELS)
    ids: list[int | None] = []
    for name in names:
        found = [m for m in models if name in (m.name, m.model, str(m.id)) or (name == "demo" and m.id is None)]
        if not found:
            known = ", ".join(m.name for m in models)
            raise CliError(f"No model “{name}” in {workspace} (it has: {known}).", exit_status=ExitStatus.NOT_FOUND)
        ids.append(found[0].id)
    return ids


def _upload(client: ApiClient, workspace: str, args: argparse.Namespace) -> int:
    for path in (args.suite, args.files):
        if path is not None and not path.is_file():
            raise CliError(f"{path}: no such file.", exit_status=ExitStatus.USAGE)
    with args.suite.open("rb") as tasks:
        fields: list[tuple[str, tuple[str, object, str]]] = [("tasks", (args.suite.name, tasks, "application/jsonl"))]
        if args.files is not None:
            fields.append(("files", (args.files.name, args.files.open("rb"), "application/zip")))
        suite = client.post(
            f"/workspaces/{workspace}/suites",
            SUITE,
            files=fields,
            data={"name": args.name or args.suite.stem},
        )
    notice(f"Suite “{one_line(suite.name, 60)}” uploaded: {suite.task_count} tasks.")
    return suite.id


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _points(difference: float) -> str:
    """Percentage points, signed: "+80.0 pts", "-10.0 pts", and "0.0 pts" for no difference."""
    points = 100 * difference
    return f"{points:+.1f} pts" if round(points, 1) else "0.0 pts"


def results_table(results: EvaluationResults) -> str:
    rows = []
    for model in results.models:
        difference = "—" if model.sandbox_minus_plain is None else _points(model.sandbox_minus_plain)
        for result in model.modes:
            interval = (
                f"{_percent(result.ci95_low)} to {_percent(result.ci95_high)}" if result.ci95_low is not None else "—"
            )
            rows.append(
                [
                    one_line(model.model, 30),
                    result.mode,
                    _percent(result.accuracy),
                    interval,
                    f"{result.correct}/{result.tasks_counted}",
                    "—" if result.mean_tokens is None else f"{result.mean_tokens:.0f}",
                    "—" if result.mean_seconds is None else f"{result.mean_seconds:.1f} s",
                    difference,
                ]
            )
    widths = [max([len(name)] + [len(row[i]) for row in rows]) for i, name in enumerate(COLUMNS)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [list(COLUMNS), *rows]
    )


def _wait(client: ApiClient, evaluation: Evaluation) -> Evaluation:
    shown = -1
    while evaluation.status == "running":
        if evaluation.tasks_done != shown:
            notice(f"{evaluation.tasks_done} of {evaluation.tasks_total} tasks done…")
            shown = evaluation.tasks_done
        time.sleep(POLL_SECONDS)
        evaluation = client.get(f"/evaluations/{evaluation.id}", EVALUATION)
    return evaluation


def run(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        workspace = args.workspace or default_workspace_slug(client)
        model_ids = _model_ids(client, workspace, args.model)
        suite_id = _upload(client, workspace, args)
        body = {"suite_id": suite_id, "model_endpoint_ids": model_ids, "modes": args.mode}
        evaluation = client.post(f"/workspaces/{workspace}/evaluations", EVALUATION, json=body)
        if not args.wait:
            if args.json:
                print_document(evaluation.as_json())
            else:
                print_line(f"Evaluation {evaluation.id} started: {evaluation.tasks_total} tasks.")
            return ExitStatus.OK
        evaluation = _wait(client, evaluation)
        results = client.get(f"/evaluations/{evaluation.id}/results", EVALUATION_RESULTS)
        if args.json:
            print_document(results.as_json())
        else:
            print_line(
                f"Evaluation {evaluation.id} {evaluation.status}: {evaluation.tasks_done} of "
                f"{evaluation.tasks_total} tasks."
            )
            print_line(results_table(results))
        return ExitStatus.OK if evaluation.status == "finished" else ExitStatus.RUN_FAILED
