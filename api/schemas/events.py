from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Schema


class EventOut(Schema):
    seq: int
    kind: str
    payload: dict[str, Any]
    at: datetime


class EventsPageOut(Schema):
    events: list[EventOut]
    last_seq: int
    is_final: bool
    next_after: int  # ask with ?after= this for the next page
