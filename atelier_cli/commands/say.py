"""`atelier say RUN "text"`: tell a running agent something; it reads it before its next step."""

from __future__ import annotations

import argparse

from atelier_cli.answers import MESSAGE, RUN
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.errors import ApiError, CliError
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line

HELP = "Tell a running agent something: it reads it before its next step."
CONFLICT = 409


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "say", help=HELP, description=HELP + " For a run that has ended, ask for a new version with `atelier refine`."
    )
    parser.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="a run that is queued or going")
    parser.add_argument("text", help="what to tell the agent")
    add_json_option(parser, "the message sent")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        try:
            sent = client.post(f"/runs/{args.run_id}/messages", MESSAGE, json={"text": args.text})
        except ApiError as error:
            if error.status != CONFLICT or not client.get(f"/runs/{args.run_id}", RUN).is_final:
                raise
            # The server's sentence says the run has ended; this says what to type instead.
            hint = f'{error.detail} For a new version: atelier refine {args.run_id} "…"'
            raise CliError(hint, exit_status=error.exit_status, http_status=error.status) from error
    if args.json:
        print_document(sent.as_json())
    else:
        print_line(
            f"Sent to run {args.run_id}: its agent reads it before its next step (`atelier follow {args.run_id}`)."
        )
    return ExitStatus.OK
