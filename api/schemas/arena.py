"""What the API says of arena comparisons, votes and the leaderboard. A blind comparison names no
model (nor a run or creation whose own answers would) to a person who has not voted on it."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Field, Schema
from pydantic import StrictBool, StrictInt

from api.schemas.bodies import RequestBody
from api.schemas.runs import RunStatusName, VisibilityName
from api.schemas.text import StoredText

Choice = Literal["A", "B", "C", "D", "tie"]


class ComparisonIn(RequestBody):
    """One brief for two to four of the workspace's models; each makes an ordinary run."""

    brief: StoredText
    title: StoredText = Field(default="", max_length=200)
    model_endpoint_ids: list[StrictInt | None] = Field(
        max_length=10, description="Two to four of the workspace's models (GET …/models); null, the demo, is refused"
    )
    blind: StrictBool = Field(default=False, description="Hide which model made what from each person until they vote")
    input_ids: list[StrictInt] = Field(
        default_factory=list, max_length=100, description="Uploaded inputs (POST …/inputs)"
    )
    artifact_ids: list[StrictInt] = Field(default_factory=list, max_length=100)
    visibility: VisibilityName = "workspace"
    max_steps: StrictInt | None = Field(default=None, ge=1)
    max_seconds: StrictInt | None = Field(default=None, ge=1)
    max_tokens: StrictInt | None = Field(default=None, ge=1)


class ContestantOut(Schema):
    letter: str
    status: RunStatusName
    is_final: bool
    files: int = Field(description="How many files its run has left so far")
    model: str | None = Field(description="The model's name; null while the comparison is blind to you")
    model_endpoint_id: int | None
    run_id: int | None = Field(description="Its run (GET /runs/{id}); null while the comparison is blind to you")
    votes: int | None = Field(description="Votes for it; null until you may see them (after your vote, if blind)")


class ComparisonOut(Schema):
    id: int
    workspace: str
    brief: str
    blind: bool
    revealed: bool = Field(description="Whether the models are named to you: not blind, or you have voted")
    all_final: bool
    may_vote: bool = Field(description="Whether you may vote on it now")
    my_vote: Choice | None
    ties: int | None
    created_at: datetime
    web_url: str
    contestants: list[ContestantOut]


class VoteIn(RequestBody):
    winner: Choice = Field(description="The best contestant's letter, or `tie`")


class StandingOut(Schema):
    rank: int
    model: str = Field(description="The model's name in the workspace")
    model_endpoint_id: int
    rating: float = Field(description="Bradley-Terry strength on the Elo scale (1000: average)")
    low: float = Field(description="The 95% interval's lower end (rating minus 1.96 standard errors of the fit)")
    high: float
    votes: int
    wins: int
    ties: int
    losses: int


class BoardOut(Schema):
    kind: str = Field(description="`overall`, or a kind of artifact (image, html, pdf, …)")
    label: str
    standings: list[StandingOut]


class LeaderboardOut(Schema):
    workspace: str
    votes: int
    boards: list[BoardOut]
