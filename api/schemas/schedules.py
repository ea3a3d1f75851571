from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Field, Schema
from pydantic import ConfigDict, StrictInt

from api.schemas.bodies import RequestBody, TimeOfDay
from api.schemas.text import StoredText
from creations.schedules.models import Schedule


class ScheduleIn(RequestBody):
    """When the creation refreshes, and what each refresh is asked."""

    model_config = ConfigDict(extra="forbid")

    cadence: Literal["daily", "weekly", "cron"]
    instruction: StoredText = Field(description="The standing instruction each refresh refines the latest version with")
    at: TimeOfDay | None = Field(default=None, description="daily and weekly: the time of day, UTC (default 06:00)")
    weekday: StrictInt | None = Field(default=None, description="weekly: 0 (Monday) to 6 (Sunday)")
    cron: StoredText = Field(default="", description="cron: five fields, UTC, e.g. 0 6 * * 1-5")


class ScheduleOut(Schema):
    creation_id: int
    cadence: str
    cron: str = Field(description="The line it follows (UTC); daily and weekly are written as one too")
    description: str
    instruction: str
    set_by: str | None
    set_at: datetime
    next_run_at: datetime
    last_run_at: datetime | None
    paused: bool
    paused_reason: str = Field(description="Why it paused itself; blank while it runs")

    @staticmethod
    def resolve_description(schedule: Schedule) -> str:
        return schedule.describe()

    @staticmethod
    def resolve_set_by(schedule: Schedule) -> str | None:
        return schedule.set_by.get_username() if schedule.set_by is not None else None

    @staticmethod
    def resolve_paused(schedule: Schedule) -> bool:
        return schedule.is_paused
