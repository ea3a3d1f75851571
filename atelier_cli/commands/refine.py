"""`atelier refine RUN "what should change"`: ask for the creation's next version,
continuing from that run, and (with --wait or --output) watch it to the end."""

from __future__ import annotations

import argparse
from pathlib import Path

from atelier_cli.answers import RUN, Run
from atelier_cli.api_client import ApiClient
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line
from atelier_cli.watch import watch_run

HELP = "Ask for a new version of a run's creation: what should change, continuing from that run's files."


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "refine",
        help=HELP,
        description=HELP
        + " Prints the new run's id, its version and its page's address. Refining a version that is not"
        " the latest starts a branch from it.",
    )
    parser.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="the run to continue from")
    parser.add_argument("instruction", help="what should change, in your own words")
    parser.add_argument(
        "--wait", action="store_true", help="follow the new run live until it ends; exit 0 only if it succeeded"
    )
    parser.add_argument(
        "--output", metavar="DIR", type=Path, help="download the new run's files here at the end (implies --wait)"
    )
    add_json_option(parser, "the new run (with --wait or --output: JSON Lines as it goes)")
    parser.set_defaults(func=run)


def run_refine(client: ApiClient, run_id: int, instruction: str, *, key: str | None = None) -> Run:
    """POST the refine; a retry after a network error asks for one version (ApiClient.post_once)."""
    return client.post_once(f"/runs/{run_id}/refine", {"instruction": instruction}, RUN, key=key)


def run(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        refined = run_refine(client, args.run_id, args.instruction)
        waiting = bool(args.wait or args.output)
        if args.json and not waiting:
            print_document(refined.as_json())
        elif not args.json:
            print_line(f"Run {refined.id} created as v{refined.version}, refining run {args.run_id}: {refined.web_url}")
        if not waiting:
            return ExitStatus.OK
        return watch_run(client, refined, output=args.output, as_json=args.json)
