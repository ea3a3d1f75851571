from __future__ import annotations

from datetime import datetime

from ninja import Schema


class StagedInputOut(Schema):
    id: int
    name: str
    size: int
    content_type: str
    expires_at: datetime
