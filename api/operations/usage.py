"""A workspace's usage for a month: what the usage page shows, as JSON, with the same
rule (viewers get the workspace's totals, not who or what spent them)."""

from typing import Literal

from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils import timezone
from ninja import Query, Router, Schema

from api.auth import caller
from api.schemas.usage import CostlyCreationOut, DailySeries, Quotas, Totals, UsageOut
from creations.usage.reports import (
    MonthError,
    costliest_creations,
    daily_usage,
    month_of,
    month_parse,
    month_totals,
)
from workspaces.permissions import workspace_membership_or_404

router = Router(tags=["usage"])


class UsageQuery(Schema):
    month: str | None = None  # YEAR-MONTH; this month when left out
    by: Literal["person", "model"] = "person"


@router.get("/{slug}/usage", response=UsageOut, summary="A workspace's usage in a month")
def workspace_usage(request: HttpRequest, slug: str, query: Query[UsageQuery]) -> UsageOut:
    user = caller(request)
    membership = workspace_membership_or_404(slug=slug, user=user)
    workspace = membership.workspace
    now = timezone.now()
    try:
        month = month_parse(query.month, now=now) if query.month else month_of(now)
    except MonthError as error:
        raise ValidationError({"month": str(error)}) from error
    sees_shares = membership.can_create
    by = query.by if sees_shares else None
    daily = daily_usage(workspace=workspace, month=month, by=by)
    totals = month_totals(workspace=workspace, month=month)
    costliest = (
        costliest_creations(workspace=workspace, month=month, user=user, membership=membership) if sees_shares else []
    )
    return UsageOut(
        workspace=workspace.slug,
        month=month.param,
        days=month.days,
        quotas=Quotas(
            concurrent_runs=workspace.quota_concurrent_runs,
            month_tokens=workspace.quota_month_tokens,
            month_sandbox_seconds=workspace.quota_month_sandbox_seconds,
            storage_bytes=workspace.quota_storage_bytes,
        ),
        totals=Totals(
            runs=totals.runs,
            prompt_tokens=totals.prompt_tokens,
            completion_tokens=totals.completion_tokens,
            tokens=totals.tokens,
            sandbox_seconds=round(totals.sandbox_seconds, 1),
            bytes_stored=totals.bytes_stored,
        ),
        by=by,
        daily=[DailySeries(name=s.name, tokens=s.tokens, sandbox_seconds=s.sandbox_seconds) for s in daily.series],
        costliest=[
            CostlyCreationOut(title=c.title, runs=c.runs, tokens=c.tokens, sandbox_seconds=round(c.sandbox_seconds, 1))
            for c in costliest
        ],
    )
