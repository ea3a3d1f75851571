"""`atelier say RUN "text"`: tell a running agent something; it reads it before its next step."""

from __future__ import annotations

import argparse

from atelier_cli.commands.common import api_client, positive_int
from atelier_cli.errors import ApiError, CliError

HELP = "Tell a running agent something: it reads it before its next step."
CONFLICT = 409


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "say", help=HELP, description=HELP + " For a run that has ended, ask for a new version with `atelier refine`."
    )
    parser.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="a run that is queued or going")
    parser.add_argument("text", help="what to tell the agent")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with api_client() as client:
        try:
            client.post(f"/runs/{args.run_id}/messages", json={"text": args.text})
        except ApiError as error:
            if error.status != CONFLICT or not client.get(f"/runs/{args.run_id}").get("is_final"):
                raise
            # The server's sentence says the run has ended; this says what to type instead.
            raise CliError(f'{error.detail} For a new version: atelier refine {args.run_id} "…"') from error
    print(f"Sent to run {args.run_id}: its agent reads it before its next step (`atelier follow {args.run_id}`).")
    return 0
