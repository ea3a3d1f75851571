"""`atelier versions RUN`: the versions of a run's creation, newest first, and which one it shows."""

from __future__ import annotations

import argparse
import shutil

from atelier_cli.answers import VERSIONS, Version
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.commands.runs import when
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line
from atelier_cli.terminal import one_line, printable

HELP = "List the versions of a run's creation, newest first (* marks the one it shows)."
COLUMNS = ("VERSION", "RUN", "STATUS", "FROM", "ASKED BY", "CREATED", "INSTRUCTION")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("versions", help=HELP, description=HELP)
    parser.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="any run of the creation")
    add_json_option(parser, "the creation and its versions (the API's answer)")
    parser.set_defaults(func=run)


def versions_table(versions: list[Version], *, width: int) -> str:
    rows = [
        [
            printable(cell)
            for cell in (
                f"{'*' if v.shown else ' '}v{v.version}",
                str(v.id),
                "unchanged" if v.unchanged else v.status,
                f"v{v.parent_version}" if v.parent_version else "brief",
                v.asked_by or "—",
                when(v.created_at),
                v.instruction or "(the brief)",
            )
        ]
        for v in versions
    ]
    widths = [max([len(name)] + [len(row[i]) for row in rows]) for i, name in enumerate(COLUMNS[:-1])]
    last_width = max(width - sum(widths) - 2 * len(widths), 20)
    lines = []
    for row in [list(COLUMNS), *rows]:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*cells, one_line(row[-1], last_width)]).rstrip())
    return "\n".join(lines)


def run(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        found = client.get(f"/runs/{args.run_id}/versions", VERSIONS)
    if args.json:
        print_document(found.as_json())
        return ExitStatus.OK
    title = found.title or one_line(found.brief, 60)
    print_line(f"Creation {found.creation_id}: {title}")
    print_line(versions_table(found.versions, width=shutil.get_terminal_size().columns))
    return ExitStatus.OK
