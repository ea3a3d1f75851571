"""What several commands share: the client from the saved login, the --json option, and argument types."""

from __future__ import annotations

import argparse

from atelier_cli.api_client import ApiClient
from atelier_cli.credentials import Credentials, credentials_load


def api_client(credentials: Credentials | None = None) -> ApiClient:
    """A client for `credentials` (checking a login), else for the saved login."""
    return ApiClient(credentials or credentials_load())


def add_json_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help=f"print {what} as JSON on stdout, nothing else; errors as a JSON object on stderr",
    )


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def model_choice(text: str) -> int | None:
    """A model endpoint's id (see the workspace's Models page), or `demo` for the built-in demo model (None)."""
    if text.strip().lower() == "demo":
        return None
    return positive_int(text)
