"""What can go wrong, each with a sentence for the person at the terminal."""

from __future__ import annotations


class CliError(Exception):
    """Ends the command with its message (no trace) and a non-zero exit code."""

    exit_code = 1
    prefix = "Error: "


class ApiError(CliError):
    """The API answered an error: its problem-details `detail` is the message."""

    def __init__(self, status: int, detail: str, *, hint: str = "") -> None:
        super().__init__(f"{detail} {hint}" if hint else detail)
        self.status = status
        self.detail = detail


class Unreachable(CliError):
    """No answer from the server (refused, timed out, the connection dropped)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"Could not reach {url}: {reason}")
        self.url = url
        self.reason = reason


class NotLoggedIn(CliError):
    def __init__(self) -> None:
        super().__init__("Not logged in: run `atelier login` (or set ATELIER_URL and ATELIER_TOKEN).")
