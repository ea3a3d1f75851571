"""`atelier create "brief"`: upload the inputs, make the run, and (with --wait or
--output) watch it to the end and download what it made."""

from __future__ import annotations

import argparse
import mimetypes
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from atelier_cli.answers import RUN, STAGED_INPUTS, Run
from atelier_cli.api_client import ApiClient
from atelier_cli.commands.common import add_json_option, api_client, model_choice, positive_int
from atelier_cli.errors import CliError
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import notice, print_document, print_line
from atelier_cli.terminal import human_size
from atelier_cli.watch import watch_run
from atelier_cli.workspaces import default_workspace_slug

HELP = "Make something: start a run from a brief, optionally wait for it and download the files."
VISIBILITIES = ("private", "workspace", "public")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "create",
        help=HELP,
        description=HELP + " Prints the run's id and its page's address.",
    )
    parser.add_argument("brief", help="what you would like made, in your own words")
    parser.add_argument("--workspace", metavar="SLUG", help="where the run goes (default: your personal workspace)")
    parser.add_argument(
        "--input", metavar="FILE", nargs="+", action="extend", type=Path, default=[], help="files the agent may use"
    )
    parser.add_argument(
        "--from-artifact",
        metavar="ID",
        type=positive_int,
        action="append",
        default=[],
        dest="artifact_ids",
        help="an artifact of an earlier run (any you may see) to give as an input file; repeat for more",
    )
    parser.add_argument(
        "--model", metavar="ID", type=model_choice, help="a model endpoint's id, or 'demo' (the default)"
    )
    parser.add_argument(
        "--visibility", choices=VISIBILITIES, default="workspace", help="who can see it (default: workspace)"
    )
    parser.add_argument("--title", default="", help="a title (default: the brief's start)")
    parser.add_argument("--max-steps", type=positive_int, metavar="N", help="at most this many agent steps")
    parser.add_argument("--max-seconds", type=positive_int, metavar="N", help="at most this long")
    parser.add_argument("--max-tokens", type=positive_int, metavar="N", help="at most this many model tokens")
    parser.add_argument(
        "--wait", action="store_true", help="follow the run live until it ends; exit 0 only if it succeeded"
    )
    parser.add_argument(
        "--output", metavar="DIR", type=Path, help="download the run's files here at the end (implies --wait)"
    )
    add_json_option(parser, "the run (with --wait or --output: JSON Lines as it goes)")
    parser.set_defaults(func=run)


def _checked_inputs(paths: list[Path]) -> list[Path]:
    """Every input is readable before anything is sent, so a typo costs nothing."""
    for path in paths:
        if not path.is_file():
            raise CliError(f"{path}: no such file.", exit_status=ExitStatus.USAGE)
    return paths


def inputs_upload(client: ApiClient, workspace: str, paths: list[Path]) -> list[int]:
    total = sum(path.stat().st_size for path in paths)
    notice(f"Uploading {len(paths)} input file(s) ({human_size(total)})…")
    with ExitStack() as files:
        fields = [
            (
                "files",
                (
                    path.name,
                    files.enter_context(path.open("rb")),
                    mimetypes.guess_type(path.name)[0] or "application/octet-stream",
                ),
            )
            for path in paths
        ]
        uploaded = client.post(f"/workspaces/{workspace}/inputs", STAGED_INPUTS, files=fields)
    return [item.id for item in uploaded]


def run_create(
    client: ApiClient,
    workspace: str,
    body: dict[str, Any],
    *,
    key: str | None = None,
) -> Run:
    """POST the run; a retry after a network error makes it once (ApiClient.post_once)."""
    return client.post_once(f"/workspaces/{workspace}/runs", body, RUN, key=key)


def run(args: argparse.Namespace) -> ExitStatus:
    inputs = _checked_inputs(args.input)
    with api_client() as client:
        workspace = args.workspace or default_workspace_slug(client)
        input_ids = inputs_upload(client, workspace, inputs) if inputs else []
        body = {
            "brief": args.brief,
            "title": args.title,
            "model_endpoint_id": args.model,
            "input_ids": input_ids,
            "artifact_ids": args.artifact_ids,
            "visibility": args.visibility,
            "max_steps": args.max_steps,
            "max_seconds": args.max_seconds,
            "max_tokens": args.max_tokens,
        }
        created = run_create(client, workspace, body)
        waiting = bool(args.wait or args.output)
        if args.json and not waiting:
            print_document(created.as_json())
        elif not args.json:
            print_line(f"Run {created.id} created in {created.workspace}: {created.web_url}")
        if not waiting:
            return ExitStatus.OK
        return watch_run(client, created, output=args.output, as_json=args.json)
