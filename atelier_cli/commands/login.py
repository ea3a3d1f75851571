"""`atelier login`: the server's address and a personal access token, checked, then saved."""

from __future__ import annotations

import argparse
import getpass
import sys

from atelier_cli.answers import WORKSPACES, as_json_list
from atelier_cli.commands.common import add_json_option, api_client
from atelier_cli.credentials import (
    DEFAULT_URL,
    Credentials,
    config_path,
    credentials_save,
    normalize_url,
    refuse_plain_http,
    saved_url,
)
from atelier_cli.errors import ApiError, CliError
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line

HELP = "Save the server's address and your personal access token (checked first)."


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "login",
        help=HELP,
        description=HELP
        + " Make a token on the web, on your Access tokens page (/settings/tokens/). The token is read without "
        "echo on a terminal, or as one line from stdin otherwise. ATELIER_URL and ATELIER_TOKEN override what "
        f"is saved here (for CI jobs). Saved in {config_path()} (readable by you only).",
    )
    parser.add_argument(
        "--url",
        help=f"the server's address (asked for when not given; default {DEFAULT_URL}); without a scheme, https://",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a plain http:// address of another machine (the token then crosses the network readable)",
    )
    add_json_option(parser, "the server, where the login was saved and your workspaces")
    parser.set_defaults(func=run)


def _ask(prompt: str) -> str:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return sys.stdin.readline().strip()


def run(args: argparse.Namespace) -> ExitStatus:
    interactive = sys.stdin.isatty()
    url = args.url
    if url is None:
        default = saved_url() or DEFAULT_URL
        url = (_ask(f"Server URL [{default}]: ") if interactive else "") or default
    url = normalize_url(url)
    refuse_plain_http(url, insecure=args.insecure)
    prompt = f"Personal access token (make one at {url}/settings/tokens/): "
    # From a pipe (`… | atelier login`) the token is the first line, without a prompt in the way.
    token = (getpass.getpass(prompt) if interactive else sys.stdin.readline()).strip()
    if not token:
        raise CliError("No token given; nothing was saved.", exit_status=ExitStatus.USAGE)
    credentials = Credentials(url=url, token=token)
    with api_client(credentials) as client:
        try:
            workspaces = client.get("/workspaces", WORKSPACES)
        except ApiError as error:
            raise CliError(
                f"{error.detail} Nothing was saved.", exit_status=error.exit_status, http_status=error.status
            ) from None
    path = credentials_save(credentials)
    if args.json:
        print_document({"url": url, "saved_to": str(path), "workspaces": as_json_list(workspaces)})
        return ExitStatus.OK
    names = ", ".join(w.slug for w in workspaces) or "none yet"
    print_line(f"Logged in to {url}. Your workspaces: {names}.")
    print_line(f"Saved in {path}.")
    return ExitStatus.OK
