"""`atelier versions RUN`: the versions of a run's creation, newest first, and which one it shows."""

from __future__ import annotations

import argparse
import json
import shutil
from typing import Any

from atelier_cli.commands.common import api_client, positive_int
from atelier_cli.commands.runs import when
from atelier_cli.terminal import one_line

HELP = "List the versions of a run's creation, newest first (* marks the one it shows)."
COLUMNS = ("VERSION", "RUN", "STATUS", "FROM", "ASKED BY", "CREATED", "INSTRUCTION")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("versions", help=HELP, description=HELP)
    parser.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="any run of the creation")
    parser.add_argument("--json", action="store_true", help="print the API's answer as JSON instead of a table")
    parser.set_defaults(func=run)


def versions_table(versions: list[dict[str, Any]], *, width: int) -> str:
    rows = [
        [
            f"{'*' if v.get('shown') else ' '}v{v.get('version', '')}",
            str(v.get("id", "")),
            str(v.get("status", "")),
            f"v{v['parent_version']}" if v.get("parent_version") else "brief",
            str(v.get("asked_by") or "—"),
            when(v.get("created_at")),
            str(v.get("instruction") or "(the brief)"),
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


def run(args: argparse.Namespace) -> int:
    with api_client() as client:
        found = client.get(f"/runs/{args.run_id}/versions")
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return 0
    title = found.get("title") or one_line(str(found.get("brief", "")), 60)
    print(f"Creation {found.get('creation_id')}: {title}")
    print(versions_table(found.get("versions", []), width=shutil.get_terminal_size().columns))
    return 0
