"""The arena: start a comparison, read it, vote, and the workspace's leaderboard.

Who may is creations.arena's answer (its selectors and services, on workspaces.permissions),
as on the web pages; a blind comparison is described to each person as its page shows it."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest
from ninja import Router, Status
from ninja.errors import HttpError

from api.auth import WRITE, caller
from api.inputs import inputs_take
from api.operations.runs import count_submission
from api.problems import Problem, refusals_as_conflicts
from api.schemas.arena import (
    BoardOut,
    ComparisonIn,
    ComparisonOut,
    ContestantOut,
    LeaderboardOut,
    StandingOut,
    VoteIn,
)
from creations.arena.selectors import (
    ComparisonViewing,
    Standing,
    comparison_for_viewer_or_404,
    comparison_tallies,
    workspace_leaderboard,
)
from creations.arena.services import AlreadyVoted, comparison_cancel, comparison_submit, vote_cast
from workspaces.models import ModelEndpoint
from workspaces.permissions import workspace_membership_or_404

router = Router(tags=["arena"])
workspace_router = Router(tags=["arena"])
TIE = "tie"


def _endpoints(ids: list[int | None]) -> list[ModelEndpoint | None]:
    """The endpoints named; one that does not exist is refused here, another workspace's by the service."""
    found = ModelEndpoint.objects.in_bulk([pk for pk in ids if pk is not None])
    missing = [pk for pk in ids if pk is not None and pk not in found]
    if missing:
        raise ValidationError({"model_endpoint_ids": "No such model; GET …/models lists the ones you may use."})
    return [found[pk] if pk is not None else None for pk in ids]


def comparison_out(request: HttpRequest, viewing: ComparisonViewing) -> ComparisonOut:
    revealed = viewing.revealed
    wins, ties = comparison_tallies(viewing.comparison) if revealed else ({}, 0)
    my_vote = viewing.my_vote
    contestants = []
    for contestant in viewing.contestants:
        run = contestant.run
        contestants.append(
            ContestantOut(
                letter=contestant.letter,
                status=run.status,  # type: ignore[arg-type]
                is_final=run.is_final,
                files=run.artifacts.count(),
                model=contestant.model_endpoint.name if revealed else None,
                model_endpoint_id=contestant.model_endpoint_id if revealed else None,
                run_id=run.pk if revealed else None,
                votes=wins.get(contestant.pk, 0) if revealed else None,
            )
        )
    return ComparisonOut(
        id=viewing.comparison.pk,
        workspace=viewing.comparison.workspace.slug,
        brief=viewing.comparison.brief,
        blind=viewing.comparison.blind,
        revealed=revealed,
        all_final=viewing.all_final,
        may_vote=viewing.can_vote_now,
        my_vote=(my_vote.winner.letter if my_vote.winner else TIE) if my_vote else None,  # type: ignore[arg-type]
        ties=ties if revealed else None,
        created_at=viewing.comparison.created_at,
        web_url=request.build_absolute_uri(viewing.comparison.get_absolute_url()),
        contestants=contestants,
    )


@workspace_router.post(
    "/{slug}/comparisons",
    auth=WRITE,
    response={201: ComparisonOut},
    summary="Compare models on one brief",
    description=(
        "Runs the brief with each of two to four of the workspace's models (each an ordinary run: "
        "quotas apply, and if one is refused none is started). The demo model cannot take part."
    ),
)
def create_comparison(request: HttpRequest, slug: str, payload: ComparisonIn) -> Status[ComparisonOut]:
    user = caller(request)
    workspace = workspace_membership_or_404(slug=slug, user=user).workspace
    count_submission(request)
    endpoints = _endpoints(payload.model_endpoint_ids)
    with transaction.atomic():  # staged inputs are taken only when the comparison is made
        comparison = comparison_submit(
            workspace=workspace,
            author=user,
            brief=payload.brief,
            title=payload.title,
            endpoints=endpoints,
            blind=payload.blind,
            files=inputs_take(workspace=workspace, user=user, ids=payload.input_ids),
            artifact_ids=payload.artifact_ids,
            visibility=payload.visibility,
            max_steps=payload.max_steps,
            max_seconds=payload.max_seconds,
            max_tokens=payload.max_tokens,
        )
    return Status(201, comparison_out(request, comparison_for_viewer_or_404(pk=comparison.pk, user=user)))


@router.get("/{comparison_id}", response=ComparisonOut, summary="One comparison, as you may see it")
def get_comparison(request: HttpRequest, comparison_id: int) -> ComparisonOut:
    return comparison_out(request, comparison_for_viewer_or_404(pk=comparison_id, user=caller(request)))


@router.post(
    "/{comparison_id}/cancel",
    auth=WRITE,
    response={202: ComparisonOut, 409: Problem},
    summary="Cancel a comparison as a whole",
    description="Every contestant run still queued or running is cancelled, as a run is; what they made stays. "
    "For whoever made the comparison, and owners and admins. 409 when every contestant had ended already.",
)
def cancel_comparison(request: HttpRequest, comparison_id: int) -> Status[ComparisonOut]:
    user = caller(request)
    viewing = comparison_for_viewer_or_404(pk=comparison_id, user=user)
    if not comparison_cancel(comparison=viewing.comparison, user=user):
        raise HttpError(409, f"Every contestant of comparison {comparison_id} has ended: there is nothing to cancel.")
    return Status(202, comparison_out(request, comparison_for_viewer_or_404(pk=comparison_id, user=user)))


@router.post(
    "/{comparison_id}/votes",
    auth=WRITE,
    response={201: ComparisonOut, 409: Problem},
    summary="Vote for the best contestant, or a tie",
    description="One vote per person, final; once every contestant has ended. Answers the comparison, named.",
)
def vote(request: HttpRequest, comparison_id: int, payload: VoteIn) -> Status[ComparisonOut]:
    user = caller(request)
    viewing = comparison_for_viewer_or_404(pk=comparison_id, user=user)
    by_letter = {contestant.letter: contestant for contestant in viewing.contestants}
    if payload.winner != TIE and payload.winner not in by_letter:
        raise ValidationError({"winner": f"This comparison's contestants are {', '.join(by_letter)}, or a tie."})
    try:
        with refusals_as_conflicts():
            vote_cast(comparison=viewing.comparison, user=user, winner=by_letter.get(payload.winner))
    except AlreadyVoted as error:
        raise HttpError(409, " ".join(error.messages)) from error
    return Status(201, comparison_out(request, comparison_for_viewer_or_404(pk=comparison_id, user=user)))


def _standings(standings: list[Standing]) -> list[StandingOut]:
    return [
        StandingOut(
            rank=s.rank,
            model=s.name,
            model_endpoint_id=s.endpoint_id,
            rating=round(s.rating.rating, 1),
            low=round(s.rating.low, 1),
            high=round(s.rating.high, 1),
            votes=s.rating.votes,
            wins=s.rating.wins,
            ties=s.rating.ties,
            losses=s.rating.losses,
        )
        for s in standings
    ]


@workspace_router.get("/{slug}/leaderboard", response=LeaderboardOut, summary="The workspace's models ranked by votes")
def leaderboard(request: HttpRequest, slug: str) -> LeaderboardOut:
    workspace = workspace_membership_or_404(slug=slug, user=caller(request)).workspace
    board = workspace_leaderboard(workspace=workspace)
    boards = [BoardOut(kind="overall", label="Overall", standings=_standings(board.overall))] if board.overall else []
    boards += [BoardOut(kind=kind, label=label, standings=_standings(found)) for kind, label, found in board.by_kind]
    return LeaderboardOut(workspace=workspace.slug, votes=board.votes, boards=boards)
