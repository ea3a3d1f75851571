from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema

from api.schemas.bodies import RequestBody
from api.schemas.text import StoredText


class MessageIn(RequestBody):
    text: StoredText = Field(description="What to tell the agent; it reads it before its next model request")


class MessageOut(Schema):
    id: int
    run_id: int
    text: str
    author: str | None = Field(description="Username of who sent it")
    author_name: str = Field(description="The name the agent is told it comes from")
    created_at: datetime
    delivered: bool = Field(description="The agent has read it (false when just sent)")
