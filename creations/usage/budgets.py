"""A workspace's monthly budgets (model tokens, sandbox time), checked twice:

- before anything of a new run is written (`check_can_submit`, called by the
  run services): a workspace that has used a budget up starts nothing until
  it renews, and the person is told which budget and when;
- while a run works: a run that crosses a budget is told to submit, then
  stopped (quota_exceeded).

Budgets are soft at the edge: runs already going may finish their step, and
two submissions at the same moment may both start. What bounds the overshoot
is the per-step check, not a lock.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.utils import dateformat

from creations.usage.selectors import MonthUsage, workspace_month_usage
from workspaces.models import Workspace


def duration_text(seconds: float) -> str:
    """`5400` -> "1 hour 30 minutes": a quota as a person reads it."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    units = ((hours, "hour"), (minutes, "minute"), (secs, "second"))
    return " ".join(f"{n:,} {unit}{'' if n == 1 else 's'}" for n, unit in units if n) or "0 seconds"


def exhausted_budget_message(*, workspace: Workspace, usage: MonthUsage) -> str | None:
    """The sentence naming the monthly budget `workspace` has used up, and when it renews; None while both last."""
    if usage.tokens >= workspace.quota_month_tokens:
        spent = f"{workspace.quota_month_tokens:,} model tokens"
    elif usage.sandbox_seconds >= workspace.quota_month_sandbox_seconds:
        spent = f"{duration_text(workspace.quota_month_sandbox_seconds)} of sandbox time"
    else:
        return None
    month = dateformat.format(usage.month_start, "F")
    renews = dateformat.format(usage.renews_at, "j F")
    return f"This workspace has used its {spent} for {month}; it renews on {renews} (UTC)."


def check_can_submit(workspace: Workspace, now: datetime | None = None) -> None:
    """Refuse a new run (a submission, a re-run, a fork) while a monthly budget of
    `workspace` is used up: raises ValidationError naming it. Called before anything is written."""
    message = exhausted_budget_message(workspace=workspace, usage=workspace_month_usage(workspace=workspace, now=now))
    if message is not None:
        raise ValidationError(message, code="budget_exhausted")
