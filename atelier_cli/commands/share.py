"""`atelier share create RUN`, `atelier share list`, `atelier share revoke LINK`: links that show a
creation's files to anyone who has them, without an account.

A link's address is in the answer that made it only (the server keeps a hash of it), so `create`
prints it; a retry after a lost answer sends the same Idempotency-Key and gets the same link.
"""

from __future__ import annotations

import argparse
import shutil
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import AwareDatetime, TypeAdapter

from atelier_cli.answers import Answer, as_json_list
from atelier_cli.api_client import ApiClient
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line
from atelier_cli.terminal import one_line

HELP = "Share a creation with a link anyone can open (no account), list your links, revoke one."
PAGE_SIZE_MAX = 100
COLUMNS = ("ID", "STATE", "SHOWS", "VIEWS", "EXPIRES", "MADE BY", "CREATION (LABEL)")


class Embed(Answer):
    path: str
    iframe: str


class ShareLink(Answer):
    """A share link as the API answers it (api/schemas/share_links.py)."""

    id: int
    creation_id: int
    title: str
    workspace: str
    version: int | None
    label: str
    token_hint: str
    state: str
    problem: str
    created_by: str | None
    expires_at: AwareDatetime | None
    view_count: int
    url: str | None = None
    embeds: list[Embed] = []


class ShareLinksPage(Answer):
    results: list[ShareLink]
    next: str | None


SHARE_LINK = TypeAdapter(ShareLink)
SHARE_LINKS = TypeAdapter(list[ShareLink])
SHARE_LINKS_PAGE = TypeAdapter(ShareLinksPage)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "share",
        help=HELP,
        description=HELP + " Owners and admins list and revoke every link of their workspace; members, their own.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    create = actions.add_parser(
        "create",
        help="make a link to a run's creation; prints it (shown this once) and each file's embed snippet",
        description="Make a link that shows the creation's files, read-only, to anyone who has it: the version "
        "the creation shows (it follows a restore), or with --pin this run's version only.",
    )
    create.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="any run of the creation")
    create.add_argument("--pin", action="store_true", help="show this run's version only")
    create.add_argument("--expires-in-days", metavar="N", type=positive_int, help="turn it off after N days (1-365)")
    create.add_argument("--label", default="", help="who it is for, to tell your links apart later")
    add_json_option(create, "the link (with its `url` and `embeds`)")
    create.set_defaults(func=run_create)

    listing = actions.add_parser(
        "list",
        help="list the links of a run's creation, or of a workspace",
        description="List share links, newest first: those you made; owners and admins see everyone's.",
    )
    which = listing.add_mutually_exclusive_group(required=True)
    which.add_argument("run_id", metavar="RUN_ID", type=positive_int, nargs="?", help="any run of the creation")
    which.add_argument("--workspace", metavar="SLUG", help="every link of this workspace you may see")
    listing.add_argument("--limit", metavar="N", type=positive_int, default=50, help="at most N links (default 50)")
    add_json_option(listing, "the links (a list)")
    listing.set_defaults(func=run_list)

    revoke = actions.add_parser(
        "revoke", help="turn a link off at once", description="Turn a share link off: it answers 410 Gone from now on."
    )
    revoke.add_argument("link_id", metavar="LINK_ID", type=positive_int, help="the link's id (as `share list` shows)")
    add_json_option(revoke, "the link, revoked")
    revoke.set_defaults(func=run_revoke)


def share_create(client: ApiClient, run_id: int, body: dict[str, Any], *, key: str | None = None) -> ShareLink:
    """POST the link; a retry after a network error makes it once (ApiClient.post_once)."""
    return client.post_once(f"/runs/{run_id}/share-links", body, SHARE_LINK, key=key)


def _shows(link: ShareLink) -> str:
    return f"v{link.version} only" if link.version is not None else "the shown version"


def _expires(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment else "never"


def run_create(args: argparse.Namespace) -> ExitStatus:
    body = {"pin": args.pin, "expires_in_days": args.expires_in_days, "label": args.label}
    with api_client() as client:
        link = share_create(client, args.run_id, body)
    if args.json:
        print_document(link.as_json())
        return ExitStatus.OK
    print_line(link.url or f"Link {link.id} was made before; its address cannot be shown again.")
    print_line(
        f"Link {link.id} to “{one_line(link.title, 60) or 'Untitled'}”: shows {_shows(link)}, "
        f"expires {_expires(link.expires_at)}. Copy it now: it is shown this once."
    )
    for embed in link.embeds:
        print_line(f"\nEmbed {one_line(embed.path, 80)}:\n  {embed.iframe}")
    return ExitStatus.OK


def _next_cursor(page: ShareLinksPage) -> str | None:
    """The next page's cursor, read from the URL the answer names (which is never requested itself)."""
    if not page.next:
        return None
    cursors = parse_qs(urlsplit(page.next).query).get("cursor")
    return cursors[0] if cursors else None


def share_links_list(client: ApiClient, *, run_id: int | None, workspace: str | None, limit: int) -> list[ShareLink]:
    if run_id is not None:
        return client.get(f"/runs/{run_id}/share-links", SHARE_LINKS)[:limit]
    params: dict[str, str | int] = {"page_size": min(limit, PAGE_SIZE_MAX)}
    found: list[ShareLink] = []
    while len(found) < limit:
        page = client.get(f"/workspaces/{workspace}/share-links", SHARE_LINKS_PAGE, params=params)
        found.extend(page.results)
        cursor = _next_cursor(page)
        if not cursor:
            break
        params["cursor"] = cursor
    return found[:limit]


def share_links_table(links: list[ShareLink], *, width: int) -> str:
    rows = [
        [
            str(link.id),
            link.state,
            _shows(link),
            str(link.view_count),
            _expires(link.expires_at),
            link.created_by or "—",
            (link.title or "Untitled") + (f" ({link.label})" if link.label else ""),
        ]
        for link in links
    ]
    widths = [max([len(name)] + [len(row[i]) for row in rows]) for i, name in enumerate(COLUMNS[:-1])]
    last_width = max(width - sum(widths) - 2 * len(widths), 20)
    lines = []
    for row in [list(COLUMNS), *rows]:
        cells = [one_line(cell, 40).ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*cells, one_line(row[-1], last_width)]).rstrip())
    return "\n".join(lines)


def run_list(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        links = share_links_list(client, run_id=args.run_id, workspace=args.workspace, limit=args.limit)
    if args.json:
        print_document(as_json_list(links))
    elif not links:
        print_line("No share links you may see yet.")
    else:
        print_line(share_links_table(links, width=shutil.get_terminal_size().columns))
    return ExitStatus.OK


def run_revoke(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        link = client.post(f"/share-links/{args.link_id}/revoke", SHARE_LINK)
    if args.json:
        print_document(link.as_json())
    else:
        print_line(f"Link {link.id} (…{link.token_hint}) is revoked: it answers 410 Gone from now on.")
    return ExitStatus.OK
