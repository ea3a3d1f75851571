"""Reads for creations, runs and artifacts."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.paginator import Page, Paginator

from creations.access import visible_to_member
from creations.models import ACTIVE_STATUSES, Creation, Run, UsageRecord
from creations.runs.versions import unchanged_refreshes
from creations.usage.selectors import workspace_month_usage
from workspaces.models import Workspace


def workspace_usage(*, workspace: Workspace) -> dict[str, Any]:
    """This calendar month's usage from the ledger (runs still going counted live),
    beside the workspace's quotas; plus the artifact bytes it keeps."""
    month = workspace_month_usage(workspace=workspace)
    ended = UsageRecord.objects.filter(
        workspace=workspace, recorded_at__gte=month.month_start, recorded_at__lt=month.renews_at
    ).count()
    return {
        "runs": ended,
        "tokens": month.tokens,
        "tokens_quota": workspace.quota_month_tokens,
        "sandbox_minutes": round(month.sandbox_seconds / 60, 1),
        "sandbox_minutes_quota": round(workspace.quota_month_sandbox_seconds / 60),
        "storage_bytes": month.storage_bytes,
        "storage_quota": workspace.quota_storage_bytes,
    }


def dashboard_context(*, workspace: Workspace, user: User | AnonymousUser | None = None) -> dict[str, Any]:
    runs = Run.objects.filter(creation__workspace=workspace).select_related(
        "creation", "creation__author", "started_by"
    )
    if user is not None:
        runs = runs.filter(creation__in=Creation.objects.filter(visible_to_member(user)))
    return {
        "running_runs": list(runs.filter(status__in=ACTIVE_STATUSES)[:20]),
        "recent_runs": list(runs[:10]),
        "usage": workspace_usage(workspace=workspace),
    }


@dataclass(frozen=True)
class VersionRow:
    run: Run
    parent_version: int | None  # the version it continues from, when that is still there
    unchanged: bool = False  # a scheduled refresh that left the files of the version it continues from


def version_rows(runs: list[Run]) -> list[VersionRow]:
    """A creation's versions (as given, newest first) with the number each continues from, and
    whether it is a scheduled refresh that changed nothing."""
    numbers = {run.pk: run.version for run in runs}
    unchanged = unchanged_refreshes(runs)
    return [
        VersionRow(
            run=run,
            parent_version=numbers.get(run.parent_id) if run.parent_id else None,
            unchanged=run.pk in unchanged,
        )
        for run in runs
    ]


def compare_default(runs: list[Run], selected: Run | None) -> Run | None:
    """The version `selected` is compared with first: its parent, else the version before it."""
    if selected is None:
        return None
    by_pk = {run.pk: run for run in runs}
    if selected.parent_id in by_pk:
        return by_pk[selected.parent_id]
    earlier = [run for run in runs if run.version < selected.version]
    return max(earlier, key=lambda run: run.version) if earlier else None


def run_artifact_page(*, run: Run, number: str) -> Page:
    """One page of a run's files, in path order: RUN_PAGE_ARTIFACTS of them, whatever the run made.
    A number that is not a page gives the first (past the end: the last). The first page of a run
    whose files fit on it is one query; any other page counts the run's files too, to say how many."""
    # Through the run's own manager, each artifact's `run` is this run: its creation's title (the
    # fallback text alternative) costs no query per file.
    artifacts = run.artifacts.order_by("path")
    size = settings.RUN_PAGE_ARTIFACTS
    if number not in ("", "1"):
        return Paginator(artifacts, size).get_page(number)
    first = list(artifacts[: size + 1])
    if len(first) <= size:
        return Paginator(first, size).page(1)
    return Page(first[:size], 1, Paginator(artifacts, size))
