"""`atelier notifications list`, `atelier notifications read [ID…]`, `atelier notifications settings`,
`atelier notifications follow|unfollow RUN_ID`: what you were told (runs that ended, comments,
mentions, invitations), marking it read, which kinds you hear of in the page and by e-mail, and
which creations you hear of as their author does."""

from __future__ import annotations

import argparse

from pydantic import AwareDatetime, TypeAdapter

from atelier_cli.answers import Answer, as_json_list
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.errors import UsageError
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line
from atelier_cli.terminal import one_line

HELP = "Your notifications: list them, mark them read, choose which kinds you hear of."
PAGE_SIZE_MAX = 100
SWITCHES = {"on": True, "off": False}


class Notification(Answer):
    """A notification as the API answers it (api/schemas/notifications.py)."""

    id: int
    kind: str
    title: str
    url: str | None
    created_at: AwareDatetime
    read_at: AwareDatetime | None


class NotificationsPage(Answer):
    results: list[Notification]
    next: str | None


class Setting(Answer):
    kind: str
    label: str
    in_page: bool
    email: bool
    mailed: bool


class ReadAll(Answer):
    marked_read: int


class Unread(Answer):
    unread: int


class Following(Answer):
    creation_id: int
    following: bool


NOTIFICATION = TypeAdapter(Notification)
PAGE = TypeAdapter(NotificationsPage)
SETTINGS = TypeAdapter(list[Setting])
READ_ALL = TypeAdapter(ReadAll)
UNREAD = TypeAdapter(Unread)
FOLLOWING = TypeAdapter(Following)


def switch(text: str) -> tuple[str, bool]:
    """KIND=on or KIND=off."""
    kind, _, value = text.partition("=")
    if value.lower() not in SWITCHES or not kind:
        raise argparse.ArgumentTypeError(f"{text!r}: write KIND=on or KIND=off, e.g. run_succeeded=off")
    return kind, SWITCHES[value.lower()]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("notifications", help=HELP, description=HELP)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="your notifications, newest first")
    listing.add_argument("--unread", action="store_true", help="the unread ones only")
    listing.add_argument("--limit", metavar="N", type=positive_int, default=20, help="at most N (default 20)")
    add_json_option(listing, "the notifications (a list)")
    listing.set_defaults(func=run_list)

    count = actions.add_parser("count", help="how many of your notifications are unread (what the bell shows)")
    add_json_option(count, "the count")
    count.set_defaults(func=run_count)

    read = actions.add_parser("read", help="mark notifications read: those named, or with --all every one")
    read.add_argument("ids", metavar="ID", type=positive_int, nargs="*")
    read.add_argument("--all", action="store_true", help="every unread notification")
    add_json_option(read, "what was marked read")
    read.set_defaults(func=run_read)

    settings = actions.add_parser(
        "settings",
        help="show, or change, which kinds you hear of",
        description="Without options, shows each kind. --page KIND=on|off and --email KIND=on|off change one.",
    )
    settings.add_argument("--page", metavar="KIND=on|off", type=switch, action="append", default=[])
    settings.add_argument("--email", metavar="KIND=on|off", type=switch, action="append", default=[])
    add_json_option(settings, "every kind with its setting (a list)")
    settings.set_defaults(func=run_settings)

    for name, following, help_text in (
        ("follow", True, "hear when a run's creation has runs that end or wait, and when it gets comments"),
        ("unfollow", False, "stop hearing of a run's creation (its author and those it mentions still do)"),
    ):
        action = actions.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        action.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="any run of the creation")
        add_json_option(action, "the creation's id and whether you follow it")
        action.set_defaults(func=run_follow, following=following)


def run_list(args: argparse.Namespace) -> ExitStatus:
    params: dict[str, str | int] = {"page_size": min(args.limit, PAGE_SIZE_MAX)}
    if args.unread:
        params["unread"] = "true"
    with api_client() as client:
        found = client.get("/notifications", PAGE, params=params).results[: args.limit]
    if args.json:
        print_document(as_json_list(found))
    elif not found:
        print_line("No unread notifications." if args.unread else "No notifications yet.")
    else:
        for item in found:
            mark = " " if item.read_at else "*"
            when = item.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
            print_line(f"{mark} {item.id:>6}  {when}  {one_line(item.title, 100)}")
            if item.url:
                print_line(f"          {item.url}")
    return ExitStatus.OK


def run_read(args: argparse.Namespace) -> ExitStatus:
    if bool(args.ids) == bool(args.all):
        raise UsageError(
            "name the notifications to mark read, or give --all", usage="", prog="atelier notifications read"
        )
    with api_client() as client:
        if args.all:
            marked = client.post("/notifications/read", READ_ALL).marked_read
            ids: list[int] = []
        else:
            ids = [client.post(f"/notifications/{pk}/read", NOTIFICATION).id for pk in args.ids]
            marked = len(ids)
    if args.json:
        print_document({"marked_read": marked, "ids": ids})
    else:
        print_line(f"{marked} notification{'s' if marked != 1 else ''} marked read.")
    return ExitStatus.OK


def run_settings(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        settings = client.get("/notifications/settings", SETTINGS)
        changes = {setting.kind: {"in_page": setting.in_page, "email": setting.email} for setting in settings}
        for option, key in ((args.page, "in_page"), (args.email, "email")):
            for kind, on in option:
                if kind not in changes:
                    raise UsageError(
                        f"{kind!r} is not a kind of notification: use one of {', '.join(changes)}",
                        usage="",
                        prog="atelier notifications settings",
                    )
                changes[kind][key] = on
        if args.page or args.email:
            body = [{"kind": kind, **values} for kind, values in changes.items()]
            settings = client.send("PUT", "/notifications/settings", SETTINGS, json=body)
    if args.json:
        print_document(as_json_list(settings))
        return ExitStatus.OK
    width = max(len(setting.kind) for setting in settings)
    print_line(f"{'KIND'.ljust(width)}  PAGE  E-MAIL")
    for setting in settings:
        email = ("on" if setting.email else "off") if setting.mailed else "—"
        print_line(f"{setting.kind.ljust(width)}  {('on' if setting.in_page else 'off').ljust(4)}  {email}")
    return ExitStatus.OK


def run_count(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        unread = client.get("/notifications/unread-count", UNREAD).unread
    if args.json:
        print_document({"unread": unread})
    else:
        print_line(f"{unread} unread notification{'s' if unread != 1 else ''}.")
    return ExitStatus.OK


def run_follow(args: argparse.Namespace) -> ExitStatus:
    path = f"/runs/{args.run_id}/follow"
    with api_client() as client:
        if args.following:
            answer = client.send("PUT", path, FOLLOWING)
        else:
            client.request("DELETE", path)
            answer = client.get(path, FOLLOWING)
    if args.json:
        print_document({"creation_id": answer.creation_id, "following": answer.following})
    elif answer.following:
        print_line(f"You follow creation {answer.creation_id}: you hear when its runs end and when it gets comments.")
    else:
        print_line(f"You no longer follow creation {answer.creation_id}.")
    return ExitStatus.OK
