"""`atelier schedule show|set|clear RUN`: refresh a run's creation on a schedule.

Each refresh is a new version refined from the latest one with the standing instruction, in the
name of whoever set it; a used-up budget pauses it, and `show` says why."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter

from atelier_cli.answers import Answer
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line

HELP = "Refresh a creation daily, weekly or on a cron line (UTC), each refresh a new version."
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


class Schedule(Answer):
    """A schedule as the API answers it (api/schemas/schedules.py)."""

    creation_id: int
    description: str
    instruction: str
    next_run_at: datetime
    paused: bool
    paused_reason: str


SCHEDULE = TypeAdapter(Schedule)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("schedule", help=HELP, description=HELP)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    show = actions.add_parser("show", help="when a run's creation refreshes next, or why it paused")
    show.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="any run of the creation")
    add_json_option(show, "the schedule")
    show.set_defaults(func=run_show)

    put = actions.add_parser("set", help="set (or set again, which resumes) a creation's schedule")
    put.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="any run of the creation")
    when = put.add_mutually_exclusive_group(required=True)
    when.add_argument("--daily", action="store_true", help="every day")
    when.add_argument("--weekly", metavar="DAY", choices=WEEKDAYS, help="every week on DAY")
    when.add_argument("--cron", metavar="LINE", help='a five-field cron line, e.g. "0 6 * * 1-5"')
    put.add_argument("--at", metavar="HH:MM", help="daily and weekly: the time of day, UTC (default 06:00)")
    put.add_argument("--instruction", required=True, help="what each refresh should do")
    add_json_option(put, "the schedule")
    put.set_defaults(func=run_set)

    clear = actions.add_parser("clear", help="stop refreshing (the versions made stay)")
    clear.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="any run of the creation")
    clear.set_defaults(func=run_clear, json=False)


def _said(schedule: Schedule) -> str:
    if schedule.paused:
        return f"Paused ({schedule.description}): {schedule.paused_reason} Set it again to resume."
    following = f"{schedule.next_run_at.astimezone():%Y-%m-%d %H:%M}"
    return f"Refreshes {schedule.description}; next {following}: “{schedule.instruction}”"


def run_show(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        schedule = client.get(f"/runs/{args.run_id}/schedule", SCHEDULE)
    if args.json:
        print_document(schedule.as_json())
    else:
        print_line(_said(schedule))
    return ExitStatus.OK


def run_set(args: argparse.Namespace) -> ExitStatus:
    body: dict[str, Any] = {"instruction": args.instruction, "at": args.at}
    if args.cron:
        body.update(cadence="cron", cron=args.cron)
    elif args.weekly:
        body.update(cadence="weekly", weekday=WEEKDAYS.index(args.weekly))
    else:
        body.update(cadence="daily")
    with api_client() as client:
        schedule = client.request("PUT", f"/runs/{args.run_id}/schedule", json=body)
    answer = SCHEDULE.validate_python(schedule.json())
    if args.json:
        print_document(answer.as_json())
    else:
        print_line(_said(answer))
    return ExitStatus.OK


def run_clear(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        client.request("DELETE", f"/runs/{args.run_id}/schedule")
    print_line("No more scheduled refreshes; the versions they made stay.")
    return ExitStatus.OK
