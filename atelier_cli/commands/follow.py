"""`atelier follow RUN_ID`: watch a run that is already going (or look back at one that ended)."""

from __future__ import annotations

import argparse
from pathlib import Path

from atelier_cli.answers import RUN
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_line
from atelier_cli.watch import watch_run

HELP = "Follow a run live until it ends (from its first event), optionally downloading its files."


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "follow", help=HELP, description=HELP + " Exits 0 only if the run succeeded. Ctrl-C offers to cancel it."
    )
    parser.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="the run's id (as `atelier runs` shows)")
    parser.add_argument("--output", metavar="DIR", type=Path, help="download the run's files here at the end")
    add_json_option(parser, "the run, its events and its files as JSON Lines")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        found = client.get(f"/runs/{args.run_id}", RUN)
        if not args.json:
            print_line(f"Run {found.id} in {found.workspace}: {found.web_url}")
        return watch_run(client, found, output=args.output, as_json=args.json)
