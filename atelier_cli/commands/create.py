"""`atelier create "brief"`: upload the inputs, make the run, and (with --wait or
--output) watch it to the end and download what it made."""

from __future__ import annotations

import argparse
import mimetypes
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from atelier_cli.api_client import ApiClient
from atelier_cli.commands.common import api_client, model_choice, positive_int
from atelier_cli.errors import CliError
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
    parser.set_defaults(func=run)


def _checked_inputs(paths: list[Path]) -> list[Path]:
    """Every input is readable before anything is sent, so a typo costs nothing."""
    for path in paths:
        if not path.is_file():
            raise CliError(f"{path}: no such file.")
    return paths


def inputs_upload(client: ApiClient, workspace: str, paths: list[Path]) -> list[int]:
    total = sum(path.stat().st_size for path in paths)
    print(f"Uploading {len(paths)} input file(s) ({human_size(total)})…", file=sys.stderr, flush=True)
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
        uploaded = client.post(f"/workspaces/{workspace}/inputs", files=fields)
    return [int(item["id"]) for item in uploaded]


def run_create(
    client: ApiClient,
    workspace: str,
    body: dict[str, Any],
    *,
    key: str | None = None,
) -> dict[str, Any]:
    """POST the run; a retry after a network error makes it once (ApiClient.post_once)."""
    run: dict[str, Any] = client.post_once(f"/workspaces/{workspace}/runs", body, key=key)
    return run


def run(args: argparse.Namespace) -> int:
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
        print(f"Run {created['id']} created in {created.get('workspace', workspace)}: {created.get('web_url', '')}")
        sys.stdout.flush()
        if not (args.wait or args.output):
            return 0
        return watch_run(client, created, output=args.output)
