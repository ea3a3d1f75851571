"""Writes for the arena: make a comparison (one ordinary run per contestant model), cancel it, and vote.

A comparison's runs go through `creations.runs.services.creation_submit` one by one, inside one
transaction: each passes the same admission, budget, storage and queue checks as any run, and if
one is refused none is kept. Votes are one per person per comparison and final (the database
holds the rule): a blind vote reveals the names to its voter, and a vote changed after seeing
them would no longer be blind.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction

from creations.arena.models import MAX_CONTESTANTS, MIN_CONTESTANTS, Comparison, Contestant, Vote
from creations.arena.selectors import comparison_membership
from creations.models import ACTIVE_STATUSES, Run, Visibility
from creations.runs.services import creation_submit, run_cancel
from workspaces.models import ModelEndpoint, Workspace
from workspaces.permissions import (
    CANCEL_COMPARISON_REFUSED,
    VOTE_REFUSED,
    may_cancel_comparison,
    may_vote,
    membership_to_start_runs,
)

DEMO_REFUSED = (
    "The demo model cannot take part in a comparison: it only replays its recorded showcase briefs, "
    "so it would not really attempt yours. Choose two to four of the workspace's own models."
)


class AlreadyVoted(ValidationError):
    """The person has voted on this comparison already; votes are final."""


def clean_contestants(workspace: Workspace, endpoints: Sequence[ModelEndpoint | None]) -> list[ModelEndpoint]:
    """Two to four different models of `workspace`, none of them the demo model; said per field otherwise."""
    if any(endpoint is None for endpoint in endpoints):
        raise ValidationError({"models": DEMO_REFUSED})
    chosen = [endpoint for endpoint in endpoints if endpoint is not None]
    if any(endpoint.workspace_id != workspace.pk for endpoint in chosen):
        raise ValidationError({"models": "A model you chose is not one of this workspace's: choose among its models."})
    if len({endpoint.pk for endpoint in chosen}) != len(chosen):
        raise ValidationError({"models": "A model was chosen twice: each model takes part once."})
    if not MIN_CONTESTANTS <= len(chosen) <= MAX_CONTESTANTS:
        raise ValidationError(
            {"models": f"Choose {MIN_CONTESTANTS} to {MAX_CONTESTANTS} models to compare; you chose {len(chosen)}."}
        )
    return chosen


@transaction.atomic
def comparison_submit(
    *,
    workspace: Workspace,
    author: User,
    brief: str,
    endpoints: Sequence[ModelEndpoint | None],
    blind: bool = False,
    files: Sequence[UploadedFile] = (),
    artifact_ids: Sequence[int] = (),
    visibility: str = Visibility.WORKSPACE,
    max_steps: int | None = None,
    max_seconds: int | None = None,
    max_tokens: int | None = None,
    title: str = "",
) -> Comparison:
    """A comparison of `endpoints` on one brief: one creation and queued run per model, each with
    its own copy of the inputs. Nothing is kept when any of them is refused."""
    membership_to_start_runs(workspace=workspace, user=author)
    chosen = clean_contestants(workspace, endpoints)
    comparison = Comparison.objects.create(
        workspace=workspace, created_by=author, brief=(brief or "").strip(), blind=blind
    )
    for position, endpoint in enumerate(chosen):
        for upload in files:
            upload.seek(0)  # each contestant stores its own copy, read from the start
        run = creation_submit(
            workspace=workspace,
            author=author,
            brief=brief,
            files=files,
            artifact_ids=artifact_ids,
            visibility=visibility,
            model_endpoint=endpoint,
            max_steps=max_steps,
            max_seconds=max_seconds,
            max_tokens=max_tokens,
            title=title,
        )
        Contestant.objects.create(
            comparison=comparison, position=position, creation=run.creation, run=run, model_endpoint=endpoint
        )
    return comparison


def vote_cast(*, comparison: Comparison, user: User, winner: Contestant | None) -> Vote:
    """`user`'s vote: `winner` the best contestant, None a tie. Who may: `may_vote`, once every
    contestant has ended; a second vote is refused (AlreadyVoted)."""
    membership = comparison_membership(comparison=comparison, user=user)
    if not may_vote(membership):
        raise PermissionDenied(VOTE_REFUSED)
    contestants = list(comparison.contestants.select_related("run"))
    if winner is not None and winner.comparison_id != comparison.pk:
        raise ValidationError({"winner": "That is not one of this comparison's contestants."})
    going = [c.letter for c in contestants if not c.run.is_final]
    if going:
        raise ValidationError(f"Vote once every contestant has finished: {', '.join(going)} still going.")
    try:
        with transaction.atomic():
            return Vote.objects.create(comparison=comparison, voter=user, winner=winner)
    except IntegrityError:
        raise AlreadyVoted("You have already voted on this comparison; a vote is final.") from None


def comparison_cancel(*, comparison: Comparison, user: User) -> int:
    """Stop the comparison as a whole: each contestant run still queued or running is cancelled as
    any run is (a queued one ends at once, a started one is stopped by its worker). Returns how
    many were asked to stop; 0 when every one had ended already. Who may: `may_cancel_comparison`."""
    membership = comparison_membership(comparison=comparison, user=user)
    if not may_cancel_comparison(membership, created_by_id=comparison.created_by_id, user=user):
        raise PermissionDenied(CANCEL_COMPARISON_REFUSED)
    going = Run.objects.select_related("creation__workspace").filter(
        pk__in=comparison.contestants.values("run_id"), status__in=ACTIVE_STATUSES
    )
    return sum(1 for run in going if run_cancel(run=run, user=user))
