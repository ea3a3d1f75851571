"""`atelier comments list RUN`, `atelier comments add RUN TEXT`, `atelier comments edit ID TEXT`,
`atelier comments delete ID`: the conversation under a run's creation. @username in the text
mentions a member of the workspace, who is told."""

from __future__ import annotations

import argparse

from pydantic import AwareDatetime, TypeAdapter

from atelier_cli.answers import Answer, as_json_list
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line

HELP = "Read the comments on a run's creation, write one (@username mentions a member), edit or delete yours."


class Comment(Answer):
    """A comment as the API answers it (api/schemas/comments.py)."""

    id: int
    version: int | None
    author: str | None
    text: str
    created_at: AwareDatetime
    edited_at: AwareDatetime | None


COMMENT = TypeAdapter(Comment)
COMMENTS = TypeAdapter(list[Comment])


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("comments", help=HELP, description=HELP)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="the comments on a run's creation, oldest first")
    listing.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="any run of the creation")
    add_json_option(listing, "the comments (a list)")
    listing.set_defaults(func=run_list)

    add = actions.add_parser("add", help="comment on a run's creation (or, with --on-version, its version)")
    add.add_argument("run_id", metavar="RUN_ID", type=positive_int, help="any run of the creation")
    add.add_argument("text", metavar="TEXT", help="what you say; @username mentions a member")
    add.add_argument("--on-version", action="store_true", help="about this run's version only")
    add_json_option(add, "the comment")
    add.set_defaults(func=run_add)

    edit = actions.add_parser("edit", help="change the words of a comment you wrote")
    edit.add_argument("comment_id", metavar="COMMENT_ID", type=positive_int)
    edit.add_argument("text", metavar="TEXT")
    add_json_option(edit, "the comment")
    edit.set_defaults(func=run_edit)

    delete = actions.add_parser("delete", help="delete a comment (yours; owners and admins any)")
    delete.add_argument("comment_id", metavar="COMMENT_ID", type=positive_int)
    add_json_option(delete, '{"deleted": ID}')
    delete.set_defaults(func=run_delete)


def comment_lines(comment: Comment) -> str:
    on = f" on v{comment.version}" if comment.version is not None else ""
    edited = " (edited)" if comment.edited_at else ""
    when = comment.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
    indented = "\n".join(f"  {line}" for line in comment.text.splitlines() or [""])
    return f"#{comment.id} {comment.author or 'someone who left'}{on}, {when}{edited}:\n{indented}"


def run_list(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        comments = client.get(f"/runs/{args.run_id}/comments", COMMENTS)
    if args.json:
        print_document(as_json_list(comments))
    elif not comments:
        print_line("No comments yet.")
    else:
        print_line("\n\n".join(comment_lines(comment) for comment in comments))
    return ExitStatus.OK


def run_add(args: argparse.Namespace) -> ExitStatus:
    body = {"text": args.text, "on_version": args.on_version}
    with api_client() as client:
        comment = client.post(f"/runs/{args.run_id}/comments", COMMENT, json=body)
    if args.json:
        print_document(comment.as_json())
    else:
        print_line(f"Comment {comment.id} posted.")
    return ExitStatus.OK


def run_edit(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        comment = client.send("PATCH", f"/comments/{args.comment_id}", COMMENT, json={"text": args.text})
    if args.json:
        print_document(comment.as_json())
    else:
        print_line(f"Comment {comment.id} saved.")
    return ExitStatus.OK


def run_delete(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        client.request("DELETE", f"/comments/{args.comment_id}")
    if args.json:
        print_document({"deleted": args.comment_id})
    else:
        print_line(f"Comment {args.comment_id} deleted.")
    return ExitStatus.OK
