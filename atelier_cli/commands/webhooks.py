"""`atelier webhooks list|add|test|deliveries|remove`: a workspace's webhooks (owners and admins).

`add` prints the signing secret, which is shown this once; how a receiver checks a delivery with
it is in the deployment guide (Webhooks)."""

from __future__ import annotations

import argparse
from datetime import datetime

from pydantic import TypeAdapter

from atelier_cli.answers import Answer, as_json_list
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line
from atelier_cli.terminal import one_line

HELP = "A workspace's webhooks: add one, send it a test, read its delivery log, remove it (owners and admins)."
EVENTS = ("run.succeeded", "run.failed", "run.cancelled", "version.made", "schedule.paused")


class Webhook(Answer):
    """A webhook as the API answers it (api/schemas/webhooks.py)."""

    id: int
    url: str
    events: list[str]
    description: str
    is_active: bool
    secret: str | None = None


class Attempt(Answer):
    number: int
    started_at: datetime
    status_code: int | None
    error: str


class Delivery(Answer):
    id: int
    event: str
    status: str
    attempts: int
    created_at: datetime
    attempt_log: list[Attempt]


class DeliveriesPage(Answer):
    results: list[Delivery]


WEBHOOK = TypeAdapter(Webhook)
WEBHOOKS = TypeAdapter(list[Webhook])
DELIVERY = TypeAdapter(Delivery)
DELIVERIES_PAGE = TypeAdapter(DeliveriesPage)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("webhooks", help=HELP, description=HELP)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="list a workspace's webhooks")
    listing.add_argument("workspace", metavar="SLUG")
    add_json_option(listing, "the webhooks (a list)")
    listing.set_defaults(func=run_list)

    add = actions.add_parser("add", help="add a webhook; prints its signing secret (shown this once)")
    add.add_argument("workspace", metavar="SLUG")
    add.add_argument("url", metavar="URL", help="where each event is POSTed")
    add.add_argument(
        "--event", dest="events", action="append", choices=EVENTS, required=True, help="an event it receives (repeat)"
    )
    add.add_argument("--description", default="", help="what receives them")
    add_json_option(add, "the webhook (with its `secret`)")
    add.set_defaults(func=run_add)

    test = actions.add_parser("test", help="send a `ping` delivery, as any other is sent")
    test.add_argument("webhook_id", metavar="WEBHOOK_ID", type=positive_int)
    add_json_option(test, "the delivery")
    test.set_defaults(func=run_test)

    deliveries = actions.add_parser("deliveries", help="a webhook's delivery log, newest first")
    deliveries.add_argument("webhook_id", metavar="WEBHOOK_ID", type=positive_int)
    add_json_option(deliveries, "the deliveries (a list), each with its attempts")
    deliveries.set_defaults(func=run_deliveries)

    remove = actions.add_parser("remove", help="delete a webhook and its delivery log")
    remove.add_argument("webhook_id", metavar="WEBHOOK_ID", type=positive_int)
    remove.set_defaults(func=run_remove, json=False)


def run_list(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        webhooks = client.get(f"/workspaces/{args.workspace}/webhooks", WEBHOOKS)
    if args.json:
        print_document(as_json_list(webhooks))
    elif not webhooks:
        print_line("No webhooks in this workspace.")
    for webhook in [] if args.json else webhooks:
        state = "on" if webhook.is_active else "off"
        print_line(f"{webhook.id}  {state:3}  {one_line(webhook.url, 60)}  {', '.join(webhook.events)}")
    return ExitStatus.OK


def run_add(args: argparse.Namespace) -> ExitStatus:
    body = {"url": args.url, "events": args.events, "description": args.description}
    with api_client() as client:
        webhook = client.post(f"/workspaces/{args.workspace}/webhooks", WEBHOOK, json=body)
    if args.json:
        print_document(webhook.as_json())
    else:
        print_line(webhook.secret or "")
        print_line(
            f"Webhook {webhook.id} to {one_line(webhook.url, 80)}: copy its signing secret now, it is shown once."
        )
    return ExitStatus.OK


def run_test(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        delivery = client.post(f"/webhooks/{args.webhook_id}/test", DELIVERY)
    if args.json:
        print_document(delivery.as_json())
    else:
        print_line(
            f"Test delivery {delivery.id} queued: `atelier webhooks deliveries {args.webhook_id}` shows how it went."
        )
    return ExitStatus.OK


def run_deliveries(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        page = client.get(f"/webhooks/{args.webhook_id}/deliveries", DELIVERIES_PAGE)
    if args.json:
        print_document(as_json_list(page.results))
        return ExitStatus.OK
    if not page.results:
        print_line("Nothing sent yet.")
    for delivery in page.results:
        print_line(f"{delivery.id}  {delivery.event}  {delivery.status}  {delivery.attempts} attempt(s)")
        for attempt in delivery.attempt_log:
            answer = f"HTTP {attempt.status_code}" if attempt.status_code else "no answer"
            said = f"  {one_line(attempt.error, 80)}" if attempt.error else ""
            print_line(f"    {attempt.number}. {attempt.started_at.astimezone():%Y-%m-%d %H:%M:%S}  {answer}{said}")
    return ExitStatus.OK


def run_remove(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        client.request("DELETE", f"/webhooks/{args.webhook_id}")
    print_line(f"Webhook {args.webhook_id} is deleted: nothing more is sent to it.")
    return ExitStatus.OK
