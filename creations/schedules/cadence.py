"""When a schedule refreshes: daily or weekly at a time of day (UTC), or on a cron line, all kept as
one five-field cron line that `croniter` reads. A line is refused when it is not one, or when it
would refresh more often than SCHEDULE_MIN_INTERVAL_MINUTES allows (each refresh is a whole run)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from croniter import croniter
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
CRON_MAX_CHARS = 100
# Gaps looked at when checking a cron line's interval: enough to see its closest pair of refreshes.
INTERVAL_SAMPLES = 50


class Cadence(models.TextChoices):
    DAILY = "daily", "Daily"
    WEEKLY = "weekly", "Weekly"
    CRON = "cron", "Cron line"


def cron_line(cadence: str, *, cron: str = "", at: time | None = None, weekday: int | None = None) -> str:
    """The cron line for what was asked; ValidationError (by field) saying what is wrong."""
    if cadence == Cadence.DAILY:
        at = at or time(6, 0)
        return f"{at.minute} {at.hour} * * *"
    if cadence == Cadence.WEEKLY:
        at = at or time(6, 0)
        if weekday is None or not 0 <= weekday <= 6:
            raise ValidationError({"weekday": "Choose the day of the week (0 is Monday, 6 Sunday)."})
        return f"{at.minute} {at.hour} * * {(weekday + 1) % 7}"  # cron counts from Sunday (0)
    if cadence == Cadence.CRON:
        return clean_cron(cron)
    raise ValidationError({"cadence": "Choose daily, weekly or a cron line."})


def cadence_fields(cadence: str, line: str) -> dict[str, object]:
    """The form's fields for a daily or weekly schedule's cron line (as `cron_line` wrote it), so
    setting it again keeps its time and day; a cron line's cadence gives the line itself."""
    fields: dict[str, object] = {"cadence": cadence, "cron": line}
    minute, hour, _day, _month, day_of_week = (line.split(" ") + [""] * 5)[:5]
    if cadence in (Cadence.DAILY, Cadence.WEEKLY) and minute.isdigit() and hour.isdigit():
        fields["at"] = time(int(hour), int(minute)).strftime("%H:%M")
        if cadence == Cadence.WEEKLY and day_of_week.isdigit():
            fields["weekday"] = (int(day_of_week) - 1) % 7  # cron counts from Sunday (0), the form from Monday
    return fields


def clean_cron(raw: str) -> str:
    line = " ".join((raw or "").split())
    if not line:
        raise ValidationError({"cron": "Write a cron line, e.g. 0 6 * * 1-5 (06:00 UTC on weekdays)."})
    if len(line) > CRON_MAX_CHARS or len(line.split(" ")) != 5 or not croniter.is_valid(line):
        raise ValidationError(
            {
                "cron": "This is not a cron line of five fields (minute hour day-of-month month day-of-week), "
                "e.g. 0 6 * * 1-5."
            }
        )
    minimum = timedelta(minutes=settings.SCHEDULE_MIN_INTERVAL_MINUTES)
    moments = croniter(line, datetime(2025, 1, 1, tzinfo=UTC))
    previous = moments.get_next(datetime)
    for _ in range(INTERVAL_SAMPLES):
        following = moments.get_next(datetime)
        if following - previous < minimum:
            raise ValidationError(
                {
                    "cron": f"This line refreshes more often than once every {settings.SCHEDULE_MIN_INTERVAL_MINUTES} "
                    "minutes; each refresh is a whole run. Space it out."
                }
            )
        previous = following
    return line


def next_after(line: str, moment: datetime) -> datetime:
    """The first time after `moment` the line names (UTC)."""
    return croniter(line, moment).get_next(datetime)


def describe(cadence: str, line: str) -> str:
    """The schedule in words, as the creation page says it."""
    fields = line.split(" ")
    if cadence in (Cadence.DAILY, Cadence.WEEKLY) and len(fields) == 5:
        at = f"{int(fields[1]):02d}:{int(fields[0]):02d} UTC"
        if cadence == Cadence.DAILY:
            return f"daily at {at}"
        return f"weekly on {WEEKDAYS[(int(fields[4]) - 1) % 7]} at {at}"
    return f"on the cron line “{line}” (UTC)"
