from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema


class StagedInputOut(Schema):
    id: int
    name: str = Field(description="Its name in the sandbox's /testbed/input")
    renamed_from: str | None = Field(
        description="The name it was sent with, when that could not be used as it is (characters other than "
        "letters, digits and a few signs, or too long); the agent is told both. Null: kept as sent"
    )
    size: int
    content_type: str
    expires_at: datetime
