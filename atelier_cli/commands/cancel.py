"""`atelier cancel RUN_ID`."""

from __future__ import annotations

import argparse

from atelier_cli.commands.common import api_client, positive_int

HELP = "Cancel a run that has not ended yet."


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("cancel", help=HELP, description=HELP)
    parser.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="the run's id (as `atelier runs` shows)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with api_client() as client:
        cancelled = client.post(f"/runs/{args.run_id}/cancel")
    print(f"Run {args.run_id} is being cancelled (status now: {cancelled.get('status')}).")
    return 0
