"""The `atelier` command: parses the command line, runs one command, and turns what
went wrong into a sentence and an exit code (never a trace)."""

from __future__ import annotations

import argparse
import sys

from atelier_cli.commands import cancel, create, follow, login, refine, runs, say, versions
from atelier_cli.errors import CliError

EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="atelier",
        description="Atelier from a script or terminal: give a language model a computer and get files back.",
        epilog="Start with `atelier login`. `atelier COMMAND --help` explains each command.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for command in (login, create, runs, follow, cancel, refine, say, versions):
        command.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as error:
        sys.stdout.flush()
        print(f"{error.prefix}{error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("\nInterrupted.", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
