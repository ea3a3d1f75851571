"""`atelier compare --model A --model B "brief"`, `atelier vote COMPARISON A|B|C|D|tie` and
`atelier leaderboard`: the arena from a terminal. A comparison runs one brief with two to four of a
workspace's models (each an ordinary run); its votes rank the models on the workspace's leaderboard.

A blind comparison names no model to you until you have voted, here as on the web."""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import TypeAdapter

from atelier_cli.answers import Answer
from atelier_cli.api_client import ApiClient
from atelier_cli.commands.common import add_json_option, api_client, positive_int
from atelier_cli.commands.create import VISIBILITIES, inputs_upload
from atelier_cli.errors import CliError
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import print_document, print_line
from atelier_cli.terminal import one_line
from atelier_cli.workspaces import default_workspace_slug

COMPARE_HELP = "Run one brief with two to four of a workspace's models at once, to vote for the best."
VOTE_HELP = "Vote for the best contestant of a comparison (its letter), or a tie; a vote is final."
BOARD_HELP = "The workspace's models ranked from the members' votes, overall and per kind of file."
CHOICES = ("A", "B", "C", "D", "tie")
DEMO = "demo"


class Contestant(Answer):
    letter: str
    status: str
    model: str | None


class Comparison(Answer):
    """A comparison as the API answers it (api/schemas/arena.py)."""

    id: int
    workspace: str
    blind: bool
    revealed: bool
    my_vote: str | None
    web_url: str
    contestants: list[Contestant]


class Standing(Answer):
    rank: int
    model: str
    rating: float
    low: float
    high: float
    votes: int
    wins: int
    ties: int
    losses: int


class Board(Answer):
    kind: str
    label: str
    standings: list[Standing]


class Leaderboard(Answer):
    workspace: str
    votes: int
    boards: list[Board]


class Model(Answer):
    id: int | None
    name: str


COMPARISON = TypeAdapter(Comparison)
LEADERBOARD = TypeAdapter(Leaderboard)
MODELS = TypeAdapter(list[Model])


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    compare = commands.add_parser(
        "compare",
        help=COMPARE_HELP,
        description=COMPARE_HELP + " Each model's run counts against the workspace's quotas like any other; "
        "the demo model cannot take part. Prints the comparison's page.",
    )
    compare.add_argument("brief", help="what you would like made, in your own words")
    compare.add_argument(
        "--model",
        metavar="ID_OR_NAME",
        action="append",
        required=True,
        dest="models",
        help="a model of the workspace, by id or by name (as its Models page shows); give two to four",
    )
    compare.add_argument("--workspace", metavar="SLUG", help="where the runs go (default: your personal workspace)")
    compare.add_argument("--blind", action="store_true", help="hide which model made what until each person votes")
    compare.add_argument(
        "--input", metavar="FILE", nargs="+", action="extend", type=Path, default=[], help="files every model gets"
    )
    compare.add_argument("--title", default="", help="a title (default: the brief's start)")
    compare.add_argument(
        "--visibility", choices=VISIBILITIES, default="workspace", help="who can see it (default: workspace)"
    )
    add_json_option(compare, "the comparison")
    compare.set_defaults(func=run_compare)

    vote = commands.add_parser("vote", help=VOTE_HELP, description=VOTE_HELP + " Prints the models' names then.")
    vote.add_argument("comparison_id", metavar="COMPARISON_ID", type=positive_int)
    vote.add_argument("winner", choices=CHOICES, help="the best contestant's letter, or `tie`")
    add_json_option(vote, "the comparison, with its models named")
    vote.set_defaults(func=run_vote)

    board = commands.add_parser("leaderboard", help=BOARD_HELP, description=BOARD_HELP)
    board.add_argument("--workspace", metavar="SLUG", help="whose leaderboard (default: your personal workspace)")
    add_json_option(board, "the leaderboard")
    board.set_defaults(func=run_leaderboard)


def model_ids(client: ApiClient, workspace: str, chosen: list[str]) -> list[int | None]:
    """Each --model as the API names it: an id as given, `demo` as null (the API says why it cannot
    take part), a name looked up among the workspace's models."""
    by_name: dict[str, int | None] | None = None
    ids: list[int | None] = []
    for text in chosen:
        text = text.strip()
        if text.isdigit():
            ids.append(int(text))
            continue
        if text.lower() == DEMO:
            ids.append(None)
            continue
        if by_name is None:
            by_name = {model.name: model.id for model in client.get(f"/workspaces/{workspace}/models", MODELS)}
        if text not in by_name:
            known = ", ".join(one_line(name, 40) for name, pk in by_name.items() if pk is not None) or "none yet"
            raise CliError(
                f"No model called “{one_line(text, 60)}” in {workspace}; its models: {known}.",
                exit_status=ExitStatus.USAGE,
            )
        ids.append(by_name[text])
    return ids


def comparison_lines(comparison: Comparison) -> list[str]:
    hidden = " (blind: the models are named once you have voted)" if not comparison.revealed else ""
    lines = [f"Comparison {comparison.id} in {comparison.workspace}{hidden}: {comparison.web_url}"]
    for contestant in comparison.contestants:
        name = f"  {one_line(contestant.model, 60)}" if contestant.model else ""
        lines.append(f"  {contestant.letter}  {contestant.status:<14}{name}".rstrip())
    if comparison.my_vote:
        lines.append("You voted for a tie." if comparison.my_vote == "tie" else f"You voted for {comparison.my_vote}.")
    return lines


def run_compare(args: argparse.Namespace) -> ExitStatus:
    for path in args.input:
        if not path.is_file():
            raise CliError(f"{path}: no such file.", exit_status=ExitStatus.USAGE)
    with api_client() as client:
        workspace = args.workspace or default_workspace_slug(client)
        body = {
            "brief": args.brief,
            "title": args.title,
            "model_endpoint_ids": model_ids(client, workspace, args.models),
            "blind": args.blind,
            "visibility": args.visibility,
            "input_ids": inputs_upload(client, workspace, args.input) if args.input else [],
        }
        comparison = client.post(f"/workspaces/{workspace}/comparisons", COMPARISON, json=body)
    if args.json:
        print_document(comparison.as_json())
    else:
        for line in comparison_lines(comparison):
            print_line(line)
    return ExitStatus.OK


def run_vote(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        comparison = client.post(f"/comparisons/{args.comparison_id}/votes", COMPARISON, json={"winner": args.winner})
    if args.json:
        print_document(comparison.as_json())
    else:
        for line in comparison_lines(comparison):
            print_line(line)
    return ExitStatus.OK


def leaderboard_lines(board: Leaderboard) -> list[str]:
    if not board.boards:
        return [f"No votes in {board.workspace} yet: start one with `atelier compare`, then vote."]
    lines = [f"{board.workspace}: {board.votes} vote{'s' if board.votes != 1 else ''}"]
    for part in board.boards:
        lines += ["", f"{one_line(part.label, 40)}", "RANK  RATING  95% INTERVAL  VOTES  WON-TIED-LOST  MODEL"]
        for s in part.standings:
            interval = f"{s.low:.0f}-{s.high:.0f}"
            record = f"{s.wins}-{s.ties}-{s.losses}"
            lines.append(
                f"{s.rank:>4}  {s.rating:>6.0f}  {interval:>12}  {s.votes:>5}  {record:>13}  {one_line(s.model, 60)}"
            )
    return lines


def run_leaderboard(args: argparse.Namespace) -> ExitStatus:
    with api_client() as client:
        workspace = args.workspace or default_workspace_slug(client)
        board = client.get(f"/workspaces/{workspace}/leaderboard", LEADERBOARD)
    if args.json:
        print_document(board.as_json())
    else:
        for line in leaderboard_lines(board):
            print_line(line)
    return ExitStatus.OK
