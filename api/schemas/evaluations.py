"""What the API says of suites and evaluations, and what it takes to start one."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Field, Schema
from pydantic import ConfigDict, StrictInt

from api.schemas.bodies import RequestBody
from creations.evaluations.models import Suite


class SuiteOut(Schema):
    id: int
    name: str
    task_count: int
    is_sample: bool = Field(description="One of the samples written for Atelier, not a team's own tasks")
    uploaded_by: str | None
    created_at: datetime

    @staticmethod
    def resolve_uploaded_by(suite: Suite) -> str | None:
        return suite.uploaded_by.get_username() if suite.uploaded_by is not None else None


class EvaluationIn(RequestBody):
    model_config = ConfigDict(extra="forbid")

    suite_id: StrictInt
    model_endpoint_ids: list[StrictInt | None] = Field(
        description="One to four of the workspace's models (GET …/models); null stands for the demo model, "
        "which is refused: it answers only its recorded briefs"
    )
    modes: Literal["sandbox", "plain", "both"] = "both"


class EvaluationOut(Schema):
    id: int
    workspace: str
    suite_id: int
    suite_name: str
    modes: str
    status: str = Field(description="running, finished or cancelled")
    tasks_done: int = Field(description="Tasks answered, failed or cancelled")
    tasks_total: int
    started_by: str | None
    created_at: datetime
    finished_at: datetime | None


class ModeResultOut(Schema):
    mode: str
    tasks_counted: int = Field(description="Tasks with an outcome (a failed run counts as wrong)")
    correct: int
    accuracy: float | None = Field(description="correct / tasks_counted, 0 to 1")
    ci95_low: float | None = Field(description="The 95% Wilson interval's lower end")
    ci95_high: float | None
    mean_tokens: float | None
    mean_seconds: float | None
    tasks_to_come: int


class ModelResultOut(Schema):
    model: str
    modes: list[ModeResultOut]
    sandbox_minus_plain: float | None = Field(description="Sandbox accuracy minus plain accuracy, -1 to 1")


class TaskResultOut(Schema):
    task_id: str
    model: str
    mode: str
    status: str
    correct: bool | None
    answer: str
    answer_from: str = Field(description="answer.txt, final message (sandbox) or reply (plain)")
    read: str = Field(description="What the scoring rule read from the answer")
    why: str
    tokens: int
    seconds: float | None
    run_id: int | None


class ResultsOut(Schema):
    evaluation: EvaluationOut
    models: list[ModelResultOut]
    tasks: list[TaskResultOut]
