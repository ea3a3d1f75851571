"""Reads for the arena: who sees a comparison, what each person is shown of it (names hidden
until they vote, when blind), and the workspace's leaderboard.

A comparison belongs to its workspace: its members see it when they see its contestants'
creations (which share one author and one visibility, creations.access); outsiders get a 404,
even for public creations, as the comparison and the votes are the workspace's own business.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.http import Http404

from creations.access import creation_visible, visible_to_member
from creations.arena.models import Comparison, Contestant, Vote
from creations.arena.ratings import Ballot, Rating, ratings
from creations.events.redaction import HIDDEN_NAME as HIDDEN_NAME  # what stands for a hidden name
from creations.events.redaction import text_without_names
from creations.models import Artifact, ArtifactKind, Creation, Run
from workspaces.models import Membership, ModelEndpoint, Workspace
from workspaces.permissions import may_vote
from workspaces.selectors import membership_get

AnyUser = User | AnonymousUser
# What a run "makes", when it leaves several kinds of file: the first of these it has (a page with
# its data files is a page). The order ArtifactKind declares them in: made things before text.
KIND_ORDER = list(ArtifactKind.values)
# How far up a chain of forks a blind contestant still hides the model of a fork that kept it:
# a fork of a fork of a fork... Each step is one more join in the one subquery every reader runs.
FORK_CHAIN_DEPTH = 5


def comparison_membership(*, comparison: Comparison, user: AnyUser) -> Membership | None:
    """The person's membership of the comparison's workspace when they may see it; None otherwise."""
    membership = membership_get(workspace=comparison.workspace_id, user=user)
    if membership is None:
        return None
    first = comparison.contestants.select_related("creation").first()
    if first is not None and not creation_visible(creation=first.creation, user=user, membership=membership):
        return None
    return membership


@dataclass(frozen=True)
class ComparisonViewing:
    comparison: Comparison
    membership: Membership
    contestants: list[Contestant]
    my_vote: Vote | None

    @property
    def revealed(self) -> bool:
        """Whether this person may know which model made what: always, unless blind and not yet voted."""
        return not self.comparison.blind or self.my_vote is not None

    @property
    def may_vote(self) -> bool:
        return may_vote(self.membership)

    @property
    def all_final(self) -> bool:
        return all(contestant.run.is_final for contestant in self.contestants)

    @property
    def can_vote_now(self) -> bool:
        return self.may_vote and self.my_vote is None and self.all_final


def comparison_for_viewer_or_404(*, pk: int, user: AnyUser) -> ComparisonViewing:
    comparison = Comparison.objects.select_related("workspace", "created_by").filter(pk=pk).first()
    if comparison is None:
        raise Http404("No such comparison.")
    membership = comparison_membership(comparison=comparison, user=user)
    if membership is None:
        raise Http404("No such comparison.")
    contestants = list(comparison.contestants.select_related("run", "creation", "model_endpoint").order_by("position"))
    my_vote = (
        Vote.objects.select_related("winner").filter(comparison=comparison, voter=user).first()
        if user.is_authenticated
        else None
    )
    return ComparisonViewing(comparison=comparison, membership=membership, contestants=contestants, my_vote=my_vote)


def model_hidden_creations(*, user: AnyUser) -> QuerySet[Creation]:
    """The creations whose model `user` may not be told: the rule every reader of a creation's or
    run's model goes through (pages, API, CLI through the API, usage CSV, gallery filter). A blind
    comparison's contestants, to whoever has not voted in it (to anyone signed out, always), and
    their forks that keep its model, and forks of those, up to FORK_CHAIN_DEPTH forks down: a
    creation with the model of a blind contestant it descends from. Unevaluated: filter or annotate
    with it, so that a list costs no query more (`model_hidden_annotation`)."""
    contestants = Contestant.objects.filter(comparison__blind=True)
    if user.is_authenticated:
        contestants = contestants.exclude(comparison__in=Vote.objects.filter(voter=user).values("comparison_id"))
    blind = contestants.values("creation_id")
    hidden = Q(pk__in=blind)
    for depth in range(1, FORK_CHAIN_DEPTH + 1):
        # The ancestor `depth` forks up is a blind contestant, and this creation has its model.
        up = "forked_from__" * (depth - 1)
        hidden |= Q(**{f"{up}forked_from_id__in": blind}, model_endpoint_id=F(f"{up}forked_from__model_endpoint_id"))
    return Creation.objects.filter(hidden)


def model_hidden_annotation(*, user: AnyUser, creation: str = "creation_id") -> Exists:
    """True on each row whose creation (reached by the lookup `creation`) hides its model from `user`."""
    return Exists(model_hidden_creations(user=user).filter(pk=OuterRef(creation)))


def model_hidden_from(*, creation: Creation, user: AnyUser) -> bool:
    """Whether `creation`'s model is hidden from `user`; no query for a creation that is neither a
    contestant nor a fork (its `contestant` selected with it, as the pages do)."""
    try:
        creation.contestant  # noqa: B018 - reads the related row, selected with the creation
    except Contestant.DoesNotExist:
        if creation.forked_from_id is None:
            return False
    return model_hidden_creations(user=user).filter(pk=creation.pk).exists()


def model_names(creation: Creation) -> tuple[str, ...]:
    """The words that name `creation`'s model: its endpoint's name and its model's (none for the demo model)."""
    endpoint = creation.model_endpoint
    if endpoint is None:
        return ()
    return tuple(name for name in (endpoint.name, endpoint.model) if name)


def model_names_hidden_from(*, creation: Creation, user: AnyUser | None) -> tuple[str, ...]:
    """The words a text must not say to `user` (anyone signed out: None), as they would name
    `creation`'s model while it is hidden from them; none when they may be told."""
    names = model_names(creation)
    if not names or not model_hidden_from(creation=creation, user=user or AnonymousUser()):
        return ()
    return names


def run_names_hidden_from(run: Run, user: AnyUser | None) -> tuple[str, ...]:
    """`model_names_hidden_from` for a run's events, in the shape the live socket takes it (config.routing)."""
    return model_names_hidden_from(creation=run.creation, user=user)


def names_hidden_from_anyone(creation: Creation) -> tuple[str, ...]:
    """The words that would name `creation`'s model to someone who has voted in no comparison: what
    a message sent outside the platform (a webhook, to a workspace's URL, read by no one in
    particular) must not say."""
    return model_names_hidden_from(creation=creation, user=AnonymousUser())


def reason_shown(*, run: Run, model_hidden: bool) -> str:
    """The run's reason as told to someone from whom its model is hidden (`model_hidden_from`): a run
    that could not start names its endpoint ("The model endpoint “…” is disabled"), not said then.
    Only the whole name is replaced: an endpoint called "A" leaves every other A in the sentence."""
    if not model_hidden or not run.reason:
        return run.reason
    return text_without_names(run.reason, model_names(run.creation))


@dataclass(frozen=True)
class ContestantNote:
    """What a contestant's own creation and run pages say of its comparison, to one person."""

    comparison: Comparison
    letter: str
    of: int  # how many contestants the comparison has
    model_hidden: bool  # blind, and this person has not voted in it
    may_open: bool  # a member of its workspace, who may open the comparison's page


def contestant_note(*, creation: Creation, user: AnyUser, is_member: bool) -> ContestantNote | None:
    """The comparison `creation` takes part in, as its pages show it to `user`; None for a creation
    of no comparison. A blind comparison hides the model from whoever has not voted in it (who made
    it included), on these pages as on its own, so that a vote judges the work alone."""
    try:
        # The pages select it with the creation: a creation of no comparison costs no query here.
        contestant = creation.contestant
    except Contestant.DoesNotExist:
        return None
    comparison = contestant.comparison
    return ContestantNote(
        comparison=comparison,
        letter=contestant.letter,
        of=comparison.contestants.count(),
        model_hidden=comparison.blind and model_hidden_from(creation=creation, user=user),
        may_open=is_member,
    )


def comparison_tallies(comparison: Comparison) -> tuple[Counter[int], int]:
    """Votes per contestant (by id) and the number of ties."""
    winners: list[int | None] = list(Vote.objects.filter(comparison=comparison).values_list("winner_id", flat=True))
    return Counter(winner for winner in winners if winner is not None), winners.count(None)


def comparisons_visible_to(*, workspace: Workspace, user: AnyUser) -> QuerySet[Comparison]:
    """The workspace's comparisons whose contestants the person (a member) may see, newest first."""
    hidden = Contestant.objects.exclude(visible_to_member(user, creation="creation__")).values("comparison_id")
    return Comparison.objects.filter(workspace=workspace).exclude(pk__in=hidden)


def artifact_kind_of_runs(run_ids: list[int]) -> dict[int, str]:
    """Each run's kind: the first kind in KIND_ORDER among its files; runs without files are left out."""
    kinds: dict[int, set[str]] = defaultdict(set)
    for run_id, kind in Artifact.objects.filter(run_id__in=run_ids).values_list("run_id", "kind").distinct():
        kinds[run_id].add(kind)
    return {run_id: min(found, key=KIND_ORDER.index) for run_id, found in kinds.items()}


@dataclass(frozen=True)
class Standing:
    rank: int
    endpoint_id: int
    name: str
    model: str
    retired: bool
    rating: Rating


@dataclass
class Leaderboard:
    overall: list[Standing]
    by_kind: list[tuple[str, str, list[Standing]]] = field(default_factory=list)  # (kind, label, standings)
    votes: int = 0


def _standings(found: list[Rating], endpoints: dict[int, ModelEndpoint]) -> list[Standing]:
    standings = []
    for rank, rating in enumerate(found, start=1):
        assert isinstance(rating.model, int)
        endpoint = endpoints[rating.model]
        standings.append(
            Standing(
                rank=rank,
                endpoint_id=endpoint.pk,
                name=endpoint.name,
                model=endpoint.model,
                retired=endpoint.retired_at is not None,
                rating=rating,
            )
        )
    return standings


def workspace_leaderboard(*, workspace: Workspace) -> Leaderboard:
    """Every model's rating from the workspace's votes, overall and per kind of file the comparison
    made (the kind most of its contestants made)."""
    votes = list(Vote.objects.filter(comparison__workspace=workspace).values_list("comparison_id", "winner_id"))
    if not votes:
        return Leaderboard(overall=[])
    contestants = list(
        Contestant.objects.filter(comparison_id__in={comparison for comparison, _ in votes}).values_list(
            "pk", "comparison_id", "run_id", "model_endpoint_id"
        )
    )
    model_of = {pk: endpoint for pk, _, _, endpoint in contestants}
    models_in: dict[int, list[int]] = defaultdict(list)
    runs_in: dict[int, list[int]] = defaultdict(list)
    for _, comparison, run, endpoint in contestants:
        models_in[comparison].append(endpoint)
        runs_in[comparison].append(run)
    run_kinds = artifact_kind_of_runs([run for _, _, run, _ in contestants])
    kind_of: dict[int, str] = {}
    for comparison, runs in runs_in.items():
        made = Counter(run_kinds[run] for run in runs if run in run_kinds)
        kind_of[comparison] = (
            min(made, key=lambda kind: (-made[kind], KIND_ORDER.index(kind))) if made else ArtifactKind.OTHER
        )
    ballots: list[tuple[int, Ballot]] = [
        (
            comparison,
            Ballot(models=tuple(models_in[comparison]), winner=model_of[winner] if winner is not None else None),
        )
        for comparison, winner in votes
        if len(models_in[comparison]) >= 2
    ]
    endpoints = ModelEndpoint.objects.in_bulk({endpoint for _, _, _, endpoint in contestants})
    board = Leaderboard(overall=_standings(ratings([b for _, b in ballots]), endpoints), votes=len(ballots))
    labels = dict(ArtifactKind.choices)
    for kind in KIND_ORDER:
        of_kind = [ballot for comparison, ballot in ballots if kind_of[comparison] == kind]
        if of_kind:
            board.by_kind.append((kind, str(labels[kind]), _standings(ratings(of_kind), endpoints)))
    return board
