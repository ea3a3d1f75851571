from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema

from api.schemas.runs import RunStatusName


class VersionOut(Schema):
    """One version of a creation: the run that made it, who asked for it and what it cost."""

    id: int = Field(description="The run's id")
    version: int
    parent_id: int | None = Field(description="The run this version continues from; null: made from the brief")
    parent_version: int | None
    asked_by: str | None = Field(description="Username of who asked for it (null: their account is gone)")
    instruction: str = Field(description="What should change; blank for a version made from the brief")
    summary: str
    status: RunStatusName
    reason: str
    is_final: bool
    shown: bool = Field(description="The version the creation shows (its gallery tile)")
    unchanged: bool = Field(
        description="A scheduled refresh whose files are identical to the version it continues from: "
        "kept, never shown as new"
    )
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    steps: int
    prompt_tokens: int
    completion_tokens: int
    sandbox_seconds: float
    output_bytes: int
    web_url: str


class VersionsOut(Schema):
    creation_id: int
    title: str
    brief: str
    shown_run_id: int | None = Field(description="The run whose version the creation shows (null: none ended yet)")
    versions: list[VersionOut] = Field(description="Newest first")
