"""`atelier runs`: a table of recent runs, newest first."""

from __future__ import annotations

import argparse
import shutil
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from atelier_cli.api_client import ApiClient
from atelier_cli.commands.common import api_client, positive_int
from atelier_cli.terminal import one_line

HELP = "List recent runs, newest first."
PAGE_SIZE_MAX = 100
COLUMNS = ("ID", "STATUS", "WORKSPACE", "CREATED", "MODEL", "TITLE")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("runs", help=HELP, description=HELP)
    parser.add_argument("--workspace", metavar="SLUG", help="only this workspace's runs (default: all of yours)")
    parser.add_argument("--status", metavar="S", help="only runs in this status (queued, running, succeeded, …)")
    parser.add_argument("--limit", metavar="N", type=positive_int, default=20, help="at most N runs (default 20)")
    parser.set_defaults(func=run)


def _next_cursor(page: dict[str, Any]) -> str | None:
    """The next page's cursor; the answer names it inside a URL, which is not followed itself
    (requests go to the configured server only)."""
    link = page.get("next")
    if not link:
        return None
    cursors = parse_qs(urlsplit(str(link)).query).get("cursor")
    return cursors[0] if cursors else None


def runs_list(client: ApiClient, *, workspace: str | None, status: str | None, limit: int) -> list[dict[str, Any]]:
    params: dict[str, str | int] = {"page_size": min(limit, PAGE_SIZE_MAX)}
    if workspace:
        params["workspace"] = workspace
    if status:
        params["status"] = status
    found: list[dict[str, Any]] = []
    while len(found) < limit:
        page = client.get("/runs", params=params)
        found.extend(page.get("results", []))
        cursor = _next_cursor(page)
        if not cursor:
            break
        params["cursor"] = cursor
    return found[:limit]


def when(value: Any) -> str:
    try:
        return datetime.fromisoformat(str(value)).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return str(value or "")


def runs_table(runs: list[dict[str, Any]], *, width: int) -> str:
    rows = [
        [
            str(r.get("id", "")),
            str(r.get("status", "")),
            str(r.get("workspace", "")),
            when(r.get("created_at")),
            str(r.get("model", "")),
            str(r.get("title") or r.get("brief") or ""),
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


def run(args: argparse.Namespace) -> int:
    with api_client() as client:
        runs = runs_list(client, workspace=args.workspace, status=args.status, limit=args.limit)
    if not runs:
        print("No runs yet." if not (args.workspace or args.status) else "No runs match.")
        return 0
    print(runs_table(runs, width=shutil.get_terminal_size().columns))
    return 0
