"""What the usage page and its CSV export show, read from the usage ledger
(one `UsageRecord` per ended run): a month's totals, its days by person or by
model, the costliest creations, and one row per run; and, beside them, the runs
going and waiting now (for the concurrency quota).

Months are calendar months in UTC, the period the quotas are given for. The
current month against the quotas, with the runs in flight counted live and the
storage in use, is `creations.usage.selectors.workspace_month_usage`; the
month figures here read only what the ledger holds, so any past month reads
the same.

A creation is named only to those who may see it (`creations.access`): another
member's private creation is "a private creation", and a deleted one, whose
privacy is no longer known, is named to nobody. A record that never had a creation
(an evaluation's plain task) is named by the title it was kept with, e.g.
"Evaluation: Squares (plain)": evaluations are readable by every member.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Case, Count, Exists, F, OuterRef, Q, QuerySet, Sum, Value, When
from django.db.models.functions import TruncDate
from django.utils import dateformat

from creations.access import creation_visible
from creations.models import ACTIVE_STATUSES, IN_FLIGHT_STATUSES, Creation, Run, RunStatus, UsageRecord, UsageSource
from creations.usage.selectors import budget_renews_at, month_start
from workspaces.models import Membership, Workspace

BY_PERSON, BY_MODEL = "person", "model"
PRIVATE_TITLE = "A private creation"
DELETED_TITLE = "A deleted creation"
NO_PERSON = "A removed account"
OTHERS = "Others"
HIDDEN_MODEL = "hidden until you vote"
# The ledger holds nothing before Atelier had one; the oldest month a person may ask for.
FIRST_YEAR = 2000

_MONTH = re.compile(r"([0-9]{4})-([0-9]{2})")


class MonthError(ValueError):
    """A `?month=` value that names no month one may look at; the message says what to give."""


@dataclass(frozen=True)
class Month:
    """A calendar month in UTC, from its first instant to the next month's."""

    start: datetime

    @property
    def end(self) -> datetime:
        return budget_renews_at(self.start)

    @property
    def param(self) -> str:
        return self.start.strftime("%Y-%m")

    @property
    def label(self) -> str:
        return dateformat.format(self.start, "F Y")

    @property
    def days(self) -> list[date]:
        first = self.start.date()
        return [first + timedelta(days=n) for n in range((self.end - self.start).days)]

    @property
    def previous(self) -> Month:
        return month_of(self.start - timedelta(days=1))

    @property
    def following(self) -> Month:
        return Month(self.end)


def month_of(now: datetime) -> Month:
    return Month(month_start(now))


def month_parse(text: str, *, now: datetime) -> Month:
    """The month `text` (YYYY-MM) names, from 2000 to the current one; MonthError otherwise."""
    match = _MONTH.fullmatch(text.strip())
    if match is None:
        raise MonthError(f"“{text[:20]}” is not a month: give it as YEAR-MONTH, for example {month_of(now).param}.")
    year, number = int(match.group(1)), int(match.group(2))
    if not 1 <= number <= 12:
        raise MonthError(f"“{text}” is not a month: the month is a number from 01 to 12.")
    month = Month(datetime(year, number, 1, tzinfo=UTC))
    current = month_of(now)
    if month.start > current.start:
        raise MonthError(f"{month.label} has not begun: nothing is spent in it yet.")
    if year < FIRST_YEAR:
        raise MonthError(f"There is no usage before {FIRST_YEAR}.")
    return month


def _records(workspace: Workspace, month: Month) -> Any:
    return UsageRecord.objects.filter(workspace=workspace, recorded_at__gte=month.start, recorded_at__lt=month.end)


@dataclass(frozen=True)
class MonthTotals:
    runs: int
    prompt_tokens: int
    completion_tokens: int
    sandbox_seconds: float
    bytes_stored: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def month_totals(*, workspace: Workspace, month: Month) -> MonthTotals:
    """What the runs that ended in `month` spent, from the ledger (one query)."""
    totals = _records(workspace, month).aggregate(
        runs=Count("pk"),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        seconds=Sum("sandbox_seconds"),
        stored=Sum("bytes_stored"),
    )
    return MonthTotals(
        runs=totals["runs"],
        prompt_tokens=int(totals["prompt"] or 0),
        completion_tokens=int(totals["completion"] or 0),
        sandbox_seconds=float(totals["seconds"] or 0),
        bytes_stored=int(totals["stored"] or 0),
    )


@dataclass(frozen=True)
class Series:
    """One person's (or model's) usage on each day of the month, in the month's day order."""

    name: str
    tokens: list[int]
    sandbox_seconds: list[float]

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens)

    @property
    def total_sandbox_seconds(self) -> float:
        return sum(self.sandbox_seconds)


@dataclass(frozen=True)
class DailyUsage:
    month: Month
    by: str | None  # BY_PERSON, BY_MODEL, or None for the workspace's total alone
    series: list[Series]


def _series_name(row: dict[str, Any], by: str | None) -> str:
    if by == BY_PERSON:
        return str(row["person__username"] or NO_PERSON)
    if by == BY_MODEL:
        return str(row["model_name"])
    return "All runs"


def daily_usage(*, workspace: Workspace, month: Month, by: str | None, most: int = 6) -> DailyUsage:
    """Tokens and sandbox time per day of `month` (UTC), one series per person or model
    (`by`), or one for the whole workspace (`by=None`). The `most` - 1 biggest spenders keep
    a series each and the rest are summed as "Others", so a chart stays readable. One query."""
    keys = {BY_PERSON: ["person_id", "person__username"], BY_MODEL: ["model_name"]}.get(by or "", [])
    rows = (
        _records(workspace, month)
        .annotate(day=TruncDate("recorded_at", tzinfo=UTC))
        .values("day", *keys)
        .annotate(tokens=Sum(F("prompt_tokens") + F("completion_tokens")), seconds=Sum("sandbox_seconds"))
        .order_by()
    )
    index = {day: n for n, day in enumerate(month.days)}
    by_name: dict[str, Series] = {}
    for row in rows:
        name = _series_name(row, by)
        series = by_name.setdefault(name, Series(name, [0] * len(index), [0.0] * len(index)))
        series.tokens[index[row["day"]]] += int(row["tokens"] or 0)
        series.sandbox_seconds[index[row["day"]]] += float(row["seconds"] or 0)
    ranked = sorted(by_name.values(), key=lambda s: (-s.total_tokens, -s.total_sandbox_seconds, s.name))
    if len(ranked) > most:
        rest = ranked[most - 1 :]
        others = Series(
            OTHERS,
            [sum(s.tokens[n] for s in rest) for n in range(len(index))],
            [sum(s.sandbox_seconds[n] for s in rest) for n in range(len(index))],
        )
        ranked = [*ranked[: most - 1], others]
    return DailyUsage(month=month, by=by, series=ranked)


@dataclass(frozen=True)
class CostlyCreation:
    title: str
    url: str | None  # None when the viewer may not open it (private, deleted)
    runs: int
    tokens: int
    sandbox_seconds: float


def _shown_title(creation: Creation | None, *, user: User | AnonymousUser, membership: Membership) -> str | None:
    """The title to show this viewer, or None when it must stay unsaid."""
    if creation is None:
        return None
    if not creation_visible(creation=creation, user=user, membership=membership):
        return None
    return str(creation)


def costliest_creations(
    *, workspace: Workspace, month: Month, user: User | AnonymousUser, membership: Membership, limit: int = 10
) -> list[CostlyCreation]:
    """The creations whose runs used the most model tokens in `month` (then the most sandbox
    time), biggest first, named only to those who may see them. Two queries."""
    top = list(
        _records(workspace, month)
        # An evaluation's plain tasks have no creation: they are grouped by the title they were kept with.
        .annotate(untied=Case(When(source=UsageSource.EVALUATION, then=F("creation_title")), default=Value("")))
        .values("creation_id", "untied")
        .annotate(
            runs=Count("pk"),
            tokens=Sum(F("prompt_tokens") + F("completion_tokens")),
            seconds=Sum("sandbox_seconds"),
        )
        .order_by("-tokens", "-seconds", "creation_id", "untied")[:limit]
    )
    ids = [row["creation_id"] for row in top if row["creation_id"] is not None]
    creations = Creation.objects.only("title", "brief", "visibility", "author_id", "workspace_id").in_bulk(ids)
    result = []
    for row in top:
        creation = creations.get(row["creation_id"])
        title = row["untied"] or _shown_title(creation, user=user, membership=membership)
        result.append(
            CostlyCreation(
                title=title or (DELETED_TITLE if creation is None else PRIVATE_TITLE),
                url=creation.get_absolute_url() if creation is not None and title is not None else None,
                runs=row["runs"],
                tokens=int(row["tokens"] or 0),
                sandbox_seconds=float(row["seconds"] or 0),
            )
        )
    return result


def workspace_runs_now(*, workspace: Workspace) -> tuple[int, int]:
    """(runs going, runs waiting) in `workspace` now: the runs holding its concurrency
    slots, and the queued ones. Not ledger figures: live run rows, in one query."""
    counts = Run.objects.filter(creation__workspace=workspace, status__in=ACTIVE_STATUSES)
    totals = counts.aggregate(
        going=Count("pk", filter=Q(status__in=IN_FLIGHT_STATUSES)),
        waiting=Count("pk", filter=Q(status=RunStatus.QUEUED)),
    )
    return totals["going"], totals["waiting"]


CSV_HEADER = [
    "date",
    "ended_at_utc",
    "person",
    "model",
    "creation",
    "status",
    "prompt_tokens",
    "completion_tokens",
    "sandbox_seconds",
    "bytes_stored",
]


def _cell(text: str) -> str:
    """Text a spreadsheet will show as text: a leading =, +, -, @ (or tab, CR) would make it
    a formula, and titles and names are typed by people."""
    return f"'{text}" if text[:1] in {"=", "+", "-", "@", "\t", "\r"} else text


def usage_csv_rows(
    *,
    workspace: Workspace,
    month: Month,
    user: User | AnonymousUser,
    membership: Membership,
    model_hidden_in: QuerySet[Creation],
) -> Iterator[list[str]]:
    """One row per run that ended in `month`, oldest first (CSV_HEADER's columns), read in
    chunks so a month of any size streams in bounded memory. Titles are the ones the ledger
    kept when each run ended, shown only to those who may see the creation. The model of a run
    whose creation is in `model_hidden_in` (the arena's blind contestants this person has not
    voted on: creations.arena.selectors.model_hidden_creations, which this layer cannot import)
    is not named."""
    records = (
        _records(workspace, month)
        .annotate(model_hidden=Exists(model_hidden_in.filter(pk=OuterRef("creation_id"))))
        .select_related("creation", "person")
        .only(
            "recorded_at",
            "model_name",
            "creation_title",
            "source",
            "status",
            "prompt_tokens",
            "completion_tokens",
            "sandbox_seconds",
            "bytes_stored",
            "person__username",
            "creation__visibility",
            "creation__author",
            "creation__workspace",
        )
        .order_by("recorded_at", "pk")
    )
    for record in records.iterator(chunk_size=1000):
        creation = record.creation
        if record.source == UsageSource.EVALUATION:
            title = record.creation_title
        elif creation is None:
            title = DELETED_TITLE
        elif creation_visible(creation=creation, user=user, membership=membership):
            title = record.creation_title
        else:
            title = PRIVATE_TITLE
        ended = record.recorded_at.astimezone(UTC)
        yield [
            ended.date().isoformat(),
            ended.isoformat(timespec="seconds"),
            _cell(record.person.username if record.person else NO_PERSON),
            HIDDEN_MODEL if record.model_hidden else _cell(record.model_name),
            _cell(title),
            record.status,
            str(record.prompt_tokens),
            str(record.completion_tokens),
            f"{record.sandbox_seconds:.1f}",
            str(record.bytes_stored),
        ]
