"""A workspace's usage page and its CSV export.

Members, admins and owners see everything: the month against each quota, the
days by person or by model, the costliest creations, and the export. Viewers
see the totals only, with no one's share of them. Outsiders get a 404.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils import dateformat, timezone
from django.views.decorators.http import require_GET

from creations.arena.selectors import model_hidden_creations
from creations.templatetags.humanize_atelier import compact_number
from creations.usage.budgets import duration_text
from creations.usage.reports import (
    BY_MODEL,
    BY_PERSON,
    CSV_HEADER,
    FIRST_YEAR,
    OTHERS,
    DailyUsage,
    Month,
    MonthError,
    costliest_creations,
    daily_usage,
    month_of,
    month_parse,
    month_totals,
    usage_csv_rows,
    workspace_runs_now,
)
from creations.usage.selectors import workspace_month_usage
from creations.web.charts import BarChart, QuotaMeter, decimal_axis_text, stacked_bar_chart
from workspaces.models import Membership, Workspace
from workspaces.permissions import workspace_membership_or_404


def _month(request: HttpRequest) -> tuple[Month, str]:
    """The month asked for (this one when none is), and what was wrong with the asking, if anything."""
    now = timezone.now()
    text = request.GET.get("month", "")
    if not text:
        return month_of(now), ""
    try:
        return month_parse(text, now=now), ""
    except MonthError as error:
        return month_of(now), f"{error} Showing {month_of(now).label} instead."


def _minutes(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == 0 else f"{value:.1f}"


def _quota_meters(workspace: Workspace, month: Month, *, current: bool) -> list[QuotaMeter]:
    """The month's tokens and sandbox time (with the runs in flight, for this month), and the
    runs going and the storage kept now, each against its quota."""
    going, waiting = workspace_runs_now(workspace=workspace)
    live = workspace_month_usage(workspace=workspace)
    if current:
        tokens, seconds = live.tokens, live.sandbox_seconds
    else:
        totals = month_totals(workspace=workspace, month=month)
        tokens, seconds = totals.tokens, totals.sandbox_seconds
    when = "this month" if current else f"in {month.label}"
    return [
        QuotaMeter(
            key="concurrent",
            label="Runs at once",
            used_text=f"{going:,} going now",
            quota_text=f"of {workspace.quota_concurrent_runs:,}",
            used=going,
            quota=workspace.quota_concurrent_runs,
            note=f"{waiting:,} waiting for a slot" if waiting else "",
        ),
        QuotaMeter(
            key="tokens",
            label="Model tokens",
            used_text=f"{tokens:,} {when}",
            quota_text=f"of {workspace.quota_month_tokens:,} a month",
            used=tokens,
            quota=workspace.quota_month_tokens,
            note="runs going now included" if current else "",
        ),
        QuotaMeter(
            key="sandbox",
            label="Sandbox time",
            used_text=f"{duration_text(seconds)} {when}",
            quota_text=f"of {duration_text(workspace.quota_month_sandbox_seconds)} a month",
            used=seconds,
            quota=workspace.quota_month_sandbox_seconds,
            note="runs going now included" if current else "",
        ),
        QuotaMeter(
            key="storage",
            label="Storage",
            used_text=f"{filesizeformat(live.storage_bytes)} kept now",
            quota_text=f"of {filesizeformat(workspace.quota_storage_bytes)}",
            used=live.storage_bytes,
            quota=workspace.quota_storage_bytes,
            note=" · ".join(f"{label} {filesizeformat(kept)}" for label, kept in live.storage_by_kind),
        ),
    ]


def _charts(daily: DailyUsage) -> list[BarChart]:
    month = daily.month
    days = month.days
    common: dict[str, Any] = {
        "x_label": f"Day of {month.label} (UTC)",
        "categories": [str(day.day) for day in days],
        "category_names": [dateformat.format(day, "j F") for day in days],
        "empty_text": f"no run ended in {month.label}.",
        "grey": OTHERS,
    }
    return [
        stacked_bar_chart(
            chart_id="tokens-chart",
            title=f"Model tokens per day, {month.label}",
            y_label="Model tokens",
            series=[(s.name, s.tokens) for s in daily.series],
            fmt=compact_number,
            unit="tokens",
            min_step=1,  # tokens come whole
            **common,
        ),
        stacked_bar_chart(
            chart_id="sandbox-chart",
            title=f"Sandbox time per day, {month.label}",
            y_label="Sandbox minutes",
            series=[(s.name, [seconds / 60 for seconds in s.sandbox_seconds]) for s in daily.series],
            fmt=_minutes,
            unit="min",
            axis_fmt=decimal_axis_text,  # 0.25, 0.50, 0.75: not 0.2, 0.5, 0.8
            **common,
        ),
    ]


def _page_url(workspace: Workspace, month: Month, by: str | None) -> str:
    url = reverse("workspace_usage", args=[workspace.slug]) + f"?month={month.param}"
    return url + (f"&by={by}" if by else "")


@login_required
@require_GET
def workspace_usage(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    sees_shares = membership.can_create  # viewers: totals only
    month, month_error = _month(request)
    current = month == month_of(timezone.now())
    by = (BY_MODEL if request.GET.get("by") == BY_MODEL else BY_PERSON) if sees_shares else None
    daily = daily_usage(workspace=workspace, month=month, by=by)
    context = {
        "workspace": workspace,
        "membership": membership,
        "sees_shares": sees_shares,
        "month": month,
        "current": current,
        "month_error": month_error,
        "by": by,
        "meters": _quota_meters(workspace, month, current=current),
        "totals": month_totals(workspace=workspace, month=month),
        "daily": daily,
        "charts": _charts(daily),
        "costliest": (
            costliest_creations(workspace=workspace, month=month, user=request.user, membership=membership)
            if sees_shares
            else []
        ),
        "previous_url": _page_url(workspace, month.previous, by)
        if month.start.year > FIRST_YEAR or month.start.month > 1
        else None,
        "next_url": None if current else _page_url(workspace, month.following, by),
        "by_person_url": _page_url(workspace, month, BY_PERSON),
        "by_model_url": _page_url(workspace, month, BY_MODEL),
        "csv_url": reverse("workspace_usage_csv", args=[workspace.slug]) + f"?month={month.param}",
    }
    return render(request, "workspaces/usage.html", context, status=400 if month_error else 200)


class _Echo:
    """csv.writer's file: hands back each line instead of keeping it."""

    def write(self, line: str) -> str:
        return line


def _csv_lines(rows: Iterator[list[str]]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(CSV_HEADER)
    for row in rows:
        yield writer.writerow(row)


def _export_membership(request: HttpRequest, slug: str) -> Membership:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    if not membership.can_create:
        raise PermissionDenied("The export lists each person's runs; viewers see the usage page's totals.")
    return membership


@login_required
@require_GET
def workspace_usage_csv(request: HttpRequest, slug: str) -> HttpResponse | StreamingHttpResponse:
    membership = _export_membership(request, slug)
    workspace = membership.workspace
    try:
        month = month_parse(request.GET.get("month", ""), now=timezone.now()) if request.GET.get("month") else None
    except MonthError as error:
        return HttpResponse(f"{error}\n", status=400, content_type="text/plain; charset=utf-8")
    month = month or month_of(timezone.now())
    rows = usage_csv_rows(
        workspace=workspace,
        month=month,
        user=request.user,
        membership=membership,
        model_hidden_in=model_hidden_creations(user=request.user),
    )
    response = StreamingHttpResponse(_csv_lines(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="usage-{workspace.slug}-{month.param}.csv"'
    return response
