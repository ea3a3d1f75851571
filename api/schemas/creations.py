from __future__ import annotations

from ninja import Field, Schema

from api.schemas.text import StoredText


class RenameIn(Schema):
    title: StoredText = Field(description="The creation's new title (not blank; at most 200 characters)")
