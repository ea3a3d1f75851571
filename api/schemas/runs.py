from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.http import HttpRequest
from django.urls import reverse
from ninja import Field, Schema
from pydantic import StrictInt

from api.schemas.bodies import RequestBody
from api.schemas.text import StoredText
from creations.arena.selectors import model_hidden_from, reason_shown
from creations.models import Run
from sandboxes.agent.demo import DEMO_MODEL_NAME

# Spelled out for the schema; tests/api/test_runs.py checks they match the models' choices.
RunStatusName = Literal[
    "queued", "starting", "running", "succeeded", "failed", "cancelled", "timed_out", "limit_reached", "quota_exceeded"
]
VisibilityName = Literal["private", "workspace", "public"]


class RunIn(RequestBody):
    """What to make, with what, and who sees it. Limits left out take the workspace's defaults."""

    brief: StoredText
    title: StoredText = Field(default="", max_length=200)
    model_endpoint_id: StrictInt | None = Field(
        default=None, description="A model of the workspace; null: the demo model"
    )
    input_ids: list[StrictInt] = Field(
        default_factory=list, max_length=100, description="Uploaded inputs (POST …/inputs)"
    )
    artifact_ids: list[StrictInt] = Field(
        default_factory=list,
        max_length=100,
        description="Artifacts of earlier runs you may see, from any workspace, copied in as inputs",
    )
    visibility: VisibilityName = "workspace"
    max_steps: StrictInt | None = Field(default=None, ge=1)
    max_seconds: StrictInt | None = Field(default=None, ge=1)
    max_tokens: StrictInt | None = Field(default=None, ge=1)


class RefineIn(RequestBody):
    instruction: StoredText = Field(
        description="What should change, in your own words (the brief and files carry over)"
    )


class ForkIn(RequestBody):
    brief: StoredText
    workspace: StoredText | None = Field(
        default=None, description="Slug of the workspace to fork into (default: the same)"
    )


class RunOut(Schema):
    """A run, read from a `Run` with the request in the serialization context."""

    id: int
    creation_id: int
    version: int = Field(description="The creation's version this run makes: 1, 2, … in the order they were asked for")
    parent_id: int | None = Field(description="The run this version continues from (a refine); null: from the brief")
    instruction: str = Field(description="What a refine asked to change; blank for a run from the brief")
    summary: str = Field(description="The agent's own summary of what it made, once it has submitted")
    workspace: str
    title: str
    brief: str
    visibility: VisibilityName
    status: RunStatusName
    reason: str
    is_final: bool
    model: str | None = Field(description="The model's name; null while `model_hidden`")
    model_endpoint_id: int | None = Field(
        description="Its model endpoint; null for the demo model, or while `model_hidden`"
    )
    model_hidden: bool = Field(
        description="The run is a contestant of a blind comparison (or a fork of one) you have not voted in: "
        "its model is named once you have (GET …/comparisons/{id})"
    )
    started_by: str | None = Field(description="The username of whoever asked for this run; null once they are gone")
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    steps: int
    prompt_tokens: int
    completion_tokens: int
    sandbox_seconds: float
    last_seq: int
    forked_from_creation_id: int | None
    web_url: str
    events_url: str
    stream_url: str
    artifacts_url: str

    @staticmethod
    def resolve_started_by(run: Run) -> str | None:
        return run.started_by.get_username() if run.started_by_id is not None and run.started_by else None

    @staticmethod
    def resolve_workspace(run: Run) -> str:
        return run.creation.workspace.slug

    @staticmethod
    def resolve_title(run: Run) -> str:
        return run.creation.title

    @staticmethod
    def resolve_brief(run: Run) -> str:
        return run.creation.brief

    @staticmethod
    def resolve_visibility(run: Run) -> str:
        return run.creation.visibility

    @staticmethod
    def resolve_model_hidden(run: Run, context: dict[str, Any]) -> bool:
        return model_hidden(run, context)

    @staticmethod
    def resolve_model(run: Run, context: dict[str, Any]) -> str | None:
        if model_hidden(run, context):
            return None
        endpoint = run.creation.model_endpoint
        return endpoint.name if endpoint is not None else DEMO_MODEL_NAME

    @staticmethod
    def resolve_model_endpoint_id(run: Run, context: dict[str, Any]) -> int | None:
        return None if model_hidden(run, context) else run.creation.model_endpoint_id

    @staticmethod
    def resolve_reason(run: Run, context: dict[str, Any]) -> str:
        return reason_shown(run=run, model_hidden=model_hidden(run, context))

    @staticmethod
    def resolve_sandbox_seconds(run: Run) -> float:
        return round(run.sandbox_seconds, 1)

    @staticmethod
    def resolve_forked_from_creation_id(run: Run) -> int | None:
        return run.creation.forked_from_id

    @staticmethod
    def resolve_web_url(run: Run, context: dict[str, Any]) -> str:
        return str(context["request"].build_absolute_uri(run.get_absolute_url()))

    @staticmethod
    def resolve_events_url(run: Run, context: dict[str, Any]) -> str:
        return run_api_url(context["request"], run, "events")

    @staticmethod
    def resolve_stream_url(run: Run, context: dict[str, Any]) -> str:
        return run_api_url(context["request"], run, "events/stream")

    @staticmethod
    def resolve_artifacts_url(run: Run, context: dict[str, Any]) -> str:
        return run_api_url(context["request"], run, "artifacts")


def model_hidden(run: Run, context: dict[str, Any]) -> bool:
    """Whether the caller may not be told the run's model (creations.arena's rule): read from the
    `model_hidden` the operations annotate their runs with (`runs_for`), so a list costs no query more."""
    hidden = getattr(run, "model_hidden", None)
    if hidden is None:  # a run read without the annotation: asked on its own, once
        hidden = run.__dict__["model_hidden"] = model_hidden_from(creation=run.creation, user=context["request"].user)
    return bool(hidden)


def run_api_url(request: HttpRequest, run: Run, tail: str) -> str:
    return str(request.build_absolute_uri(f"{reverse('api-v1:api-root')}runs/{run.pk}/{tail}"))
