"""Every exit status `atelier` returns, with its name and what it means: the one table
commands, errors, `atelier --help` and the README's CLI section all take it from.

1 is a run that ended without succeeding (scripts test `atelier create --wait` with
`if`), 2 a wrong command line (argparse's own) and 130 Ctrl-C (what a shell reports);
the other failures each have a number of their own, so a script can tell "log in
again" from "try later" from "no such run".
"""

from __future__ import annotations

import textwrap
from enum import IntEnum

HELP_WIDTH = 79


class ExitStatus(IntEnum):
    OK = 0
    RUN_FAILED = 1
    USAGE = 2
    NOT_AUTHENTICATED = 3
    FORBIDDEN = 4
    NOT_FOUND = 5
    CONFLICT = 6
    REFUSED = 7
    SERVER_ERROR = 8
    UNREACHABLE = 9
    LOCAL_FILES = 10
    INSECURE = 11
    INTERRUPTED = 130

    @property
    def label(self) -> str:
        """The name scripts see in --json errors: `not_found`."""
        return self.name.lower()

    @property
    def meaning(self) -> str:
        return MEANINGS[self]


MEANINGS = {
    ExitStatus.OK: "done (for --wait, --output and follow: the run succeeded)",
    ExitStatus.RUN_FAILED: "the run waited on ended without succeeding: failed, cancelled, timed out, over a limit",
    ExitStatus.USAGE: "the command line is wrong: an unknown option, a missing argument, an input file not there",
    ExitStatus.NOT_AUTHENTICATED: "not logged in, or the server refused the token (expired, revoked): log in again",
    ExitStatus.FORBIDDEN: "the token may not do this: a viewer's or a read-only token's write, say",
    ExitStatus.NOT_FOUND: "no such run, artifact or workspace, or none you may see",
    ExitStatus.CONFLICT: "the run's state does not allow it: cancelling or messaging a run that ended, "
    "refining one still going",
    ExitStatus.REFUSED: "refused by a rule, limit or quota: input not valid, a used-up budget, too many requests",
    ExitStatus.SERVER_ERROR: "the server failed, or answered what the Atelier API does not: a wrong address, "
    "a proxy's page, a malformed reply, a file that does not match its sha256",
    ExitStatus.UNREACHABLE: "no answer from the server: refused, timed out, the connection dropped",
    ExitStatus.LOCAL_FILES: "a file here could not be read or written (the output folder, the saved login)",
    ExitStatus.INSECURE: "login refused plain http to another machine, where the token would cross the network "
    "readable: give https://, or --insecure on a network you trust",
    ExitStatus.INTERRUPTED: "interrupted (Ctrl-C): stopped following, the run goes on unless you cancelled it",
}


def exit_status_table() -> str:
    """The table as `atelier --help` prints it, each meaning wrapped beside its name."""
    width = max(len(status.label) for status in ExitStatus)
    indent = " " * (2 + 3 + 2 + width + 2)
    rows = [
        textwrap.fill(
            status.meaning,
            HELP_WIDTH,
            initial_indent=f"  {status.value:>3}  {status.label:<{width}}  ",
            subsequent_indent=indent,
        )
        for status in ExitStatus
    ]
    return "exit statuses:\n" + "\n".join(rows)
