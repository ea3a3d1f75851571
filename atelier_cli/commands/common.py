"""What several commands share: the client from the saved login, and argument types."""

from __future__ import annotations

import argparse

from atelier_cli.api_client import ApiClient
from atelier_cli.credentials import credentials_load


def api_client() -> ApiClient:
    return ApiClient(credentials_load())


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
