"""The API's answers as typed objects, checked where they arrive (ApiClient): each holds
the fields this client uses, validated, so a reply missing one or of the wrong type is
a clear error (MalformedAnswer) and never a KeyError deep inside a command.

Each object also keeps the answer as it came, which is what `--json` prints: a script
gets the API's own objects, as /api/v1/docs describes them, whatever this client uses.
The shapes follow the API's schemas (api/schemas/), which this package may not import.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    PrivateAttr,
    TypeAdapter,
    ValidatorFunctionWrapHandler,
    model_validator,
)


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True)
    _received: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_what_was_received(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        answer = handler(data)
        if isinstance(data, dict):
            answer._received = data
        return answer

    def as_json(self) -> dict[str, Any]:
        """The object as the API sent it (all its fields, not only those checked here)."""
        return self._received


class Workspace(Answer):
    slug: str
    name: str
    is_personal: bool
    role: str


class Run(Answer):
    id: int
    version: int
    workspace: str
    title: str
    brief: str
    status: str
    reason: str
    is_final: bool
    model: str | None  # None: hidden from you until you vote in its blind comparison
    model_hidden: bool = False  # older servers do not say
    started_by: str | None = None  # older servers do not say
    created_at: AwareDatetime
    web_url: str


class RunsPage(Answer):
    results: list[Run]
    next: str | None


class Version(Answer):
    id: int
    version: int
    parent_version: int | None
    asked_by: str | None
    status: str
    created_at: AwareDatetime
    instruction: str
    shown: bool
    unchanged: bool = False  # a scheduled refresh that changed nothing (servers before it say nothing)


class Versions(Answer):
    creation_id: int
    title: str
    brief: str
    versions: list[Version]


class Artifact(Answer):
    id: int
    path: str
    size: int
    sha256: str | None


class StagedInput(Answer):
    id: int
    name: str


class Message(Answer):
    id: int
    run_id: int
    text: str


class RunEvent(Answer):
    """One event of a run's stream: the run event contract's kind and payload, in order by seq."""

    seq: int
    kind: str
    payload: dict[str, Any]
    at: datetime | None = None


class LanguageModel(Answer):
    id: int | None  # None: the demo model
    name: str
    model: str


class Suite(Answer):
    id: int
    name: str
    task_count: int


class Evaluation(Answer):
    id: int
    status: str
    tasks_done: int
    tasks_total: int


class ModeResult(Answer):
    mode: str
    tasks_counted: int
    correct: int
    accuracy: float | None
    ci95_low: float | None
    ci95_high: float | None
    mean_tokens: float | None
    mean_seconds: float | None


class ModelResult(Answer):
    model: str
    modes: list[ModeResult]
    sandbox_minus_plain: float | None


class EvaluationResults(Answer):
    evaluation: Evaluation
    models: list[ModelResult]


WORKSPACES = TypeAdapter(list[Workspace])
LANGUAGE_MODELS = TypeAdapter(list[LanguageModel])
SUITE = TypeAdapter(Suite)
EVALUATION = TypeAdapter(Evaluation)
EVALUATION_RESULTS = TypeAdapter(EvaluationResults)
RUN = TypeAdapter(Run)
RUNS_PAGE = TypeAdapter(RunsPage)
VERSIONS = TypeAdapter(Versions)
ARTIFACTS = TypeAdapter(list[Artifact])
STAGED_INPUTS = TypeAdapter(list[StagedInput])
MESSAGE = TypeAdapter(Message)
RUN_EVENT = TypeAdapter(RunEvent)


def as_json_list(answers: Sequence[Answer]) -> list[dict[str, Any]]:
    return [answer.as_json() for answer in answers]
