from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema
from pydantic import ConfigDict, StrictBool

from api.schemas.bodies import RequestBody
from api.schemas.text import StoredText
from creations.comments.models import COMMENT_MAX_CHARS


class CommentIn(RequestBody):
    model_config = ConfigDict(extra="forbid")

    text: StoredText = Field(
        description=f"What you say (up to {COMMENT_MAX_CHARS:,} characters); @username mentions a member, who is told"
    )
    on_version: StrictBool = Field(
        default=False, description="About this run's version only; otherwise (the default) the creation as a whole"
    )


class CommentEditIn(RequestBody):
    model_config = ConfigDict(extra="forbid")

    text: StoredText = Field(description="The comment's new words; members it mentions for the first time are told")


class CommentOut(Schema):
    id: int
    creation_id: int
    run_id: int | None = Field(description="The run whose version it is about; null: the creation as a whole")
    version: int | None
    author: str | None = Field(description="Username of who wrote it (null: their account is gone)")
    text: str = Field(description="As written: render it as text, never as HTML")
    mentions: list[str] = Field(description="Usernames of the members it mentions")
    created_at: datetime
    edited_at: datetime | None
    may_edit: bool = Field(description="Whether you may edit it (its author may)")
    may_delete: bool = Field(description="Whether you may delete it (its author may; owners and admins may)")
