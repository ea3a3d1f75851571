"""`atelier cancel RUN_ID`."""

from __future__ import annotations

import argparse

from atelier_cli.answers import RUN
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line

HELP = "Cancel a run that has not ended yet."


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("cancel", help=HELP, description=HELP)
    parser.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="the run's id (as `atelier runs` shows)")
    add_json_option(parser, "the run")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        cancelled = client.post(f"/runs/{args.run_id}/cancel", RUN)
    if args.json:
        print_document(cancelled.as_json())
    else:
        print_line(f"Run {args.run_id} is being cancelled (status now: {cancelled.status}).")
    return ExitStatus.OK
