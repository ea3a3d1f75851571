from __future__ import annotations

from ninja import Field

from api.schemas.bodies import RequestBody
from api.schemas.text import StoredText


class RenameIn(RequestBody):
    title: StoredText = Field(description="The creation's new title (not blank; at most 200 characters)")
