"""What can go wrong, each with a sentence for the person at the terminal and the exit
status (atelier_cli/exit_status.py) a script sees."""

from __future__ import annotations

from atelier_cli.exit_status import ExitStatus


class CliError(Exception):
    """Ends the command with its message (no trace) and its exit status; `http_status`:
    the API's answer it comes from, if any."""

    prefix = "Error: "

    def __init__(self, message: str, *, exit_status: ExitStatus, http_status: int | None = None) -> None:
        super().__init__(message)
        self.exit_status = exit_status
        self.http_status = http_status

    def for_people(self) -> str:
        return f"{self.prefix}{self}"


class UsageError(CliError):
    """The command line is wrong: argparse's own message, shown as argparse shows it."""

    def __init__(self, message: str, *, usage: str, prog: str) -> None:
        super().__init__(message, exit_status=ExitStatus.USAGE)
        self.usage = usage
        self.prog = prog

    def for_people(self) -> str:
        return f"{self.usage}{self.prog}: error: {self}"


class Interrupted(CliError):
    """Ctrl-C while a command worked (following a run has its own: Detached)."""

    prefix = "\n"

    def __init__(self) -> None:
        super().__init__("Interrupted.", exit_status=ExitStatus.INTERRUPTED)


def status_for_http(status: int, *, ours: bool) -> ExitStatus:
    """The exit status for an error answer; `ours`: it carried the API's problem details
    (a 404 without them is another server's page, not a missing run)."""
    if status == 401:
        return ExitStatus.NOT_AUTHENTICATED
    if status == 403:
        return ExitStatus.FORBIDDEN
    if status == 404:
        return ExitStatus.NOT_FOUND if ours else ExitStatus.SERVER_ERROR
    if status == 409:
        return ExitStatus.CONFLICT
    if 400 <= status < 500:
        return ExitStatus.REFUSED
    return ExitStatus.SERVER_ERROR


class ApiError(CliError):
    """The API answered an error: its problem-details `detail` is the message."""

    def __init__(self, status: int, detail: str, *, hint: str = "", ours: bool = True) -> None:
        message = f"{detail} {hint}" if hint else detail
        super().__init__(message, exit_status=status_for_http(status, ours=ours), http_status=status)
        self.status = status
        self.detail = detail


class MalformedAnswer(CliError):
    """The server answered, but not what the Atelier API sends."""

    def __init__(self, what: str, problem: str) -> None:
        super().__init__(
            f"The server's answer to {what} is not what the Atelier API sends ({problem}). "
            "Is this the right address, and is the server up to date?",
            exit_status=ExitStatus.SERVER_ERROR,
        )


class Unreachable(CliError):
    """No answer from the server (refused, timed out, the connection dropped)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"Could not reach {url}: {reason}", exit_status=ExitStatus.UNREACHABLE)
        self.url = url
        self.reason = reason


class InsecureAddress(CliError):
    """Login to plain http on another machine, without --insecure."""

    def __init__(self, url: str, secure_url: str) -> None:
        super().__init__(
            f"{url} is plain http to another machine: your token would cross the network readable by anyone "
            f"on the way. Use {secure_url}, or add --insecure if you trust every network in between. "
            "Nothing was saved.",
            exit_status=ExitStatus.INSECURE,
        )


class NotLoggedIn(CliError):
    def __init__(self) -> None:
        super().__init__(
            "Not logged in: run `atelier login` (or set ATELIER_URL and ATELIER_TOKEN).",
            exit_status=ExitStatus.NOT_AUTHENTICATED,
        )


class RunFailed(CliError):
    """The run waited on ended without succeeding; the sentence says how it ended."""

    prefix = ""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_status=ExitStatus.RUN_FAILED)


class Detached(CliError):
    """The person stopped watching; the run goes on."""

    prefix = ""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_status=ExitStatus.INTERRUPTED)
