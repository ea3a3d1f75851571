"""Reads of what a workspace has spent: this month's model tokens and sandbox time,
and the storage it holds now (every kind of file, creations.usage.storage).

Months are calendar months in UTC, the period the quotas (Workspace.quota_*)
are given for. A month's figures are the usage ledger's records for it (each
run recorded once, in the month it ended) plus the live counters of the runs
still in flight, which the ledger will record when they end; so a run's usage
counts from its first step, exactly once. Every function takes `now` so tests
(and a page showing another month) can say which month they mean.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import reduce
from typing import Any

from django.db.models import (
    BigIntegerField,
    DurationField,
    ExpressionWrapper,
    F,
    Field,
    FloatField,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.expressions import Combinable
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from creations.models import IN_FLIGHT_STATUSES, Run, UsageRecord
from creations.usage.reused_statement import ReusedStatement
from creations.usage.storage import storage_holders
from workspaces.models import Workspace


def month_start(now: datetime | None = None) -> datetime:
    """The first instant (UTC) of the calendar month `now` falls in."""
    now = (now or timezone.now()).astimezone(UTC)
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def budget_renews_at(now: datetime | None = None) -> datetime:
    """When this month's budgets renew: the first instant (UTC) of the next calendar month."""
    start = month_start(now)
    return (start + timedelta(days=32)).replace(day=1)


@dataclass(frozen=True)
class MonthUsage:
    """A workspace's usage in one calendar month, as of `now`.

    `recorded_*` come from the ledger (runs that ended this month), `in_flight_*`
    from the runs still going (their tokens so far, their time since they started)."""

    month_start: datetime
    renews_at: datetime
    recorded_tokens: int
    recorded_sandbox_seconds: float
    in_flight_tokens: int
    in_flight_sandbox_seconds: float
    storage_bytes: int  # every file kept now (storage is not monthly)
    # The same, by kind of file (creations.usage.storage's labels), biggest first, empty kinds left out.
    storage_by_kind: tuple[tuple[str, int], ...] = ()

    @property
    def tokens(self) -> int:
        return self.recorded_tokens + self.in_flight_tokens

    @property
    def sandbox_seconds(self) -> float:
        return self.recorded_sandbox_seconds + self.in_flight_sandbox_seconds


_BIG = BigIntegerField()
_FLOAT = FloatField()
_DURATION = DurationField()


def _sum_of(rows: QuerySet[Any], expression: Combinable, output: Field[Any, Any]) -> Coalesce:
    """A scalar subquery: SUM(expression) over `rows`, zero when there are none."""
    summed = rows.order_by().annotate(_all=Value(1)).values("_all").annotate(total=Sum(expression)).values("total")
    zero = Value(timedelta(0) if isinstance(output, DurationField) else 0)
    return Coalesce(Subquery(summed, output_field=output), zero, output_field=output)


def _storage_bytes(workspace_id: Any) -> ExpressionWrapper:
    """The bytes kept by the workspace whose id `workspace_id` gives (a value or an OuterRef):
    one scalar subquery per kind of stored file (creations.usage.storage), added up."""
    parts = [_sum_of(holder.rows(workspace_id), holder.size, _BIG) for holder in storage_holders()]
    return ExpressionWrapper(reduce(operator.add, parts), output_field=_BIG)


def workspace_month_usage(*, workspace: Workspace | int, now: datetime | None = None) -> MonthUsage:
    """Tokens and sandbox time `workspace` used in the calendar month of `now`, with the
    runs in flight counted live, and the storage it uses now.

    One statement (PostgreSQL gives it one snapshot): a run that ends meanwhile
    is counted either live or in the ledger, never both or neither. It reads the
    ledger through its (workspace, recorded_at) index, the in-flight runs through
    the (status, heartbeat_at) one, and each kind of stored file through its
    workspace's (or its creation's) index."""
    workspace_id = workspace.pk if isinstance(workspace, Workspace) else workspace
    usage = workspaces_month_usage(workspaces=[workspace_id], now=now)
    if workspace_id not in usage:
        raise Workspace.DoesNotExist(f"No workspace {workspace_id}.")
    return usage[workspace_id]


def workspaces_month_usage(
    *, workspaces: Iterable[Workspace | int], now: datetime | None = None
) -> dict[int, MonthUsage]:
    """`workspace_month_usage` of several workspaces, by workspace id, in the same one
    statement: a list of workspaces costs one query however long it is."""
    now = now or timezone.now()
    start, renews_at = month_start(now), budget_renews_at(now)
    ids = sorted({workspace.pk if isinstance(workspace, Workspace) else workspace for workspace in workspaces})
    if not ids:
        return {}
    kinds = len(storage_holders())
    rows = _MONTH_USAGE.rows(shape=kinds, ids=ids, now=now, start=start, renews_at=renews_at)
    return {
        row["pk"]: MonthUsage(
            month_start=start,
            renews_at=renews_at,
            recorded_tokens=int(row["recorded_tokens"]),
            recorded_sandbox_seconds=float(row["recorded_seconds"]),
            in_flight_tokens=int(row["in_flight_tokens"]),
            in_flight_sandbox_seconds=row["in_flight_time"].total_seconds() if row["in_flight_time"] else 0.0,
            storage_bytes=sum(int(row[f"storage_{n}"]) for n in range(kinds)),
            storage_by_kind=_by_label(row),
        )
        for row in rows
    }


def _month_usage_rows(
    *, ids: list[int], now: datetime, start: datetime, renews_at: datetime
) -> QuerySet[Workspace, dict[str, Any]]:
    records = UsageRecord.objects.filter(workspace_id=OuterRef("pk"), recorded_at__gte=start, recorded_at__lt=renews_at)
    in_flight = Run.objects.filter(status__in=IN_FLIGHT_STATUSES, creation__workspace_id=OuterRef("pk"))
    # Time held so far; never negative, whatever `now` a caller passes.
    held = Greatest(
        ExpressionWrapper(Value(now) - F("started_at"), output_field=_DURATION),
        Value(timedelta(0), output_field=_DURATION),
    )
    kinds = _storage_kinds(OuterRef("pk"))  # each kind of stored file, summed apart for the usage page
    return (
        Workspace.objects.filter(pk__in=ids)
        .order_by()
        .annotate(
            recorded_tokens=_sum_of(records, F("prompt_tokens") + F("completion_tokens"), _BIG),
            recorded_seconds=_sum_of(records, F("sandbox_seconds"), _FLOAT),
            in_flight_tokens=_sum_of(in_flight, F("prompt_tokens") + F("completion_tokens"), _BIG),
            in_flight_time=_sum_of(in_flight, held, _DURATION),
            **kinds,
        )
        .values("pk", "recorded_tokens", "recorded_seconds", "in_flight_tokens", "in_flight_time", *kinds)
    )


# Built by the ORM once per process and thread (per number of workspaces and kinds of stored file),
# then run with each call's values: building it took more CPU than the database's answer.
_MONTH_USAGE = ReusedStatement(_month_usage_rows)


def _storage_kinds(workspace_id: Any) -> dict[str, Coalesce]:
    """The bytes each kind of stored file holds for the workspace `workspace_id` gives, by column name."""
    return {f"storage_{n}": _sum_of(h.rows(workspace_id), h.size, _BIG) for n, h in enumerate(storage_holders())}


def _by_label(row: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    by_label: dict[str, int] = {}
    for n, holder in enumerate(storage_holders()):
        by_label[holder.label] = by_label.get(holder.label, 0) + int(row[f"storage_{n}"] or 0)
    return tuple(sorted(((label, kept) for label, kept in by_label.items() if kept), key=lambda k: (-k[1], k[0])))


def workspace_storage_bytes(*, workspace: Workspace | int) -> int:
    """Bytes `workspace` keeps in storage now, every kind of file (creations.usage.storage):
    what its storage quota counts. One query; deleting a creation lowers it as its files go."""
    workspace_id = workspace.pk if isinstance(workspace, Workspace) else workspace
    kept = (
        Workspace.objects.filter(pk=workspace_id)
        .annotate(storage_bytes=_storage_bytes(OuterRef("pk")))
        .values_list("storage_bytes", flat=True)
        .first()
    )
    return int(kept or 0)
