"""The `atelier` command: parses the command line, runs one command, and turns what
went wrong into a sentence (or, with --json, a JSON object) and its exit status
(atelier_cli/exit_status.py), never a trace."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import NoReturn

from atelier_cli.commands import (
    arena,
    cancel,
    comments,
    create,
    evaluate,
    follow,
    login,
    notifications,
    refine,
    runs,
    say,
    schedule,
    share,
    versions,
    webhooks,
)
from atelier_cli.errors import CliError, Interrupted, UsageError
from atelier_cli.exit_status import HELP_WIDTH, ExitStatus, exit_status_table
from atelier_cli.output import notices_as_json, report_error

COMMANDS = (
    login,
    create,
    runs,
    follow,
    cancel,
    refine,
    say,
    versions,
    share,
    webhooks,
    schedule,
    comments,
    notifications,
    evaluate,
    arena,
)
EPILOG = (
    "Start with `atelier login`. `atelier COMMAND --help` explains each command. With --json, a command prints "
    "its result as JSON on stdout and nothing else there, and an error as a JSON object on stderr."
)


class AtelierParser(argparse.ArgumentParser):
    """argparse, whose command-line errors end like every other error (as JSON with --json)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, usage=self.format_usage(), prog=self.prog)


def build_parser() -> argparse.ArgumentParser:
    parser = AtelierParser(
        prog="atelier",
        description="Atelier from a script or terminal: give a language model a computer and get files back.",
        epilog=textwrap.fill(EPILOG, HELP_WIDTH) + "\n\n" + exit_status_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.register(commands)
    return parser


def asks_for_json(argv: list[str]) -> bool:
    """--json among the options (before a `--`), known before the command line is parsed so
    that a command-line error is reported as JSON too."""
    options = argv[: argv.index("--")] if "--" in argv else argv
    return "--json" in options


def _local_failure(error: OSError) -> CliError:
    where = f" ({error.filename})" if error.filename else ""
    return CliError(f"{error.strerror or error}{where}", exit_status=ExitStatus.LOCAL_FILES)


def run_command(argv: list[str], *, as_json: bool) -> ExitStatus:
    try:
        args = build_parser().parse_args(argv)
        status: ExitStatus = args.func(args)
        return status
    except CliError as error:
        report_error(error, as_json=as_json)
        return error.exit_status
    except OSError as error:  # a file here: an input, the output folder, the saved login
        failure = _local_failure(error)
        report_error(failure, as_json=as_json)
        return failure.exit_status
    except KeyboardInterrupt:
        interrupted = Interrupted()
        report_error(interrupted, as_json=as_json)
        return interrupted.exit_status


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    as_json = asks_for_json(arguments)
    with notices_as_json(as_json):
        return int(run_command(arguments, as_json=as_json))


if __name__ == "__main__":
    sys.exit(main())
