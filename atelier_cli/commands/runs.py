"""`atelier runs`: a table of recent runs, newest first."""

from __future__ import annotations

import argparse
import shutil
from datetime import datetime
from urllib.parse import parse_qs, urlsplit

from atelier_cli.answers import RUNS_PAGE, Run, RunsPage, as_json_list
from atelier_cli.api_client import ApiClient
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line
from atelier_cli.terminal import one_line, printable

HELP = "List recent runs, newest first."
PAGE_SIZE_MAX = 100
COLUMNS = ("ID", "STATUS", "WORKSPACE", "CREATED", "BY", "MODEL", "TITLE")
# A blind comparison's contestant you have not voted on: the server names no model.
HIDDEN_MODEL = "(hidden until you vote)"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("runs", help=HELP, description=HELP)
    parser.add_argument("--workspace", metavar="SLUG", help="only this workspace's runs (default: all of yours)")
    parser.add_argument("--status", metavar="S", help="only runs in this status (queued, running, succeeded, …)")
    parser.add_argument("--limit", metavar="N", type=positive_int, default=20, help="at most N runs (default 20)")
    add_json_option(parser, "the runs (a list)")
    parser.set_defaults(func=run)


def _next_cursor(page: RunsPage) -> str | None:
    """The next page's cursor; the answer names it inside a URL, which is not followed itself
    (requests go to the configured server only)."""
    if not page.next:
        return None
    cursors = parse_qs(urlsplit(page.next).query).get("cursor")
    return cursors[0] if cursors else None


def runs_list(client: ApiClient, *, workspace: str | None, status: str | None, limit: int) -> list[Run]:
    params: dict[str, str | int] = {"page_size": min(limit, PAGE_SIZE_MAX)}
    if workspace:
        params["workspace"] = workspace
    if status:
        params["status"] = status
    found: list[Run] = []
    while len(found) < limit:
        page = client.get("/runs", RUNS_PAGE, params=params)
        found.extend(page.results)
        cursor = _next_cursor(page)
        if not cursor:
            break
        params["cursor"] = cursor
    return found[:limit]


def when(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def runs_table(runs: list[Run], *, width: int) -> str:
    rows = [
        [
            printable(cell)
            for cell in (
                str(r.id),
                r.status,
                r.workspace,
                when(r.created_at),
                r.started_by or "—",
                r.model if r.model is not None else HIDDEN_MODEL,
                r.title or r.brief,
            )
        ]
        for r in runs
    ]
    widths = [max([len(name)] + [len(row[i]) for row in rows]) for i, name in enumerate(COLUMNS[:-1])]
    title_width = max(width - sum(widths) - 2 * len(widths), 20)
    lines = []
    for row in [list(COLUMNS), *rows]:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*cells, one_line(row[-1], title_width)]).rstrip())
    return "\n".join(lines)


def run(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        runs = runs_list(client, workspace=args.workspace, status=args.status, limit=args.limit)
    if args.json:
        print_document(as_json_list(runs))
    elif not runs:
        print_line("No runs yet." if not (args.workspace or args.status) else "No runs match.")
    else:
        print_line(runs_table(runs, width=shutil.get_terminal_size().columns))
    return ExitStatus.OK
