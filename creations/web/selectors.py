"""Reads for creations, runs and artifacts."""

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone

from creations.models import ACTIVE_STATUSES, Artifact, Creation, Run, Visibility
from workspaces.models import Workspace


def _month_start() -> datetime:
    return timezone.now().replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def workspace_usage(*, workspace: Workspace) -> dict[str, Any]:
    """This calendar month's usage: runs, model tokens, sandbox time; plus stored artifact bytes."""
    month = Run.objects.filter(creation__workspace=workspace, created_at__gte=_month_start()).aggregate(
        runs=Count("pk"),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        seconds=Sum("sandbox_seconds"),
    )
    stored = Artifact.objects.filter(run__creation__workspace=workspace).aggregate(bytes=Sum("size"))
    return {
        "runs": month["runs"] or 0,
        "tokens": (month["prompt"] or 0) + (month["completion"] or 0),
        "sandbox_minutes": round((month["seconds"] or 0) / 60, 1),
        "storage_bytes": stored["bytes"] or 0,
    }


def _visible_in_workspace(user: User | AnonymousUser) -> Q:
    """Workspace members see everything but other people's private creations."""
    return ~Q(visibility=Visibility.PRIVATE) | Q(author_id=user.pk)


def dashboard_context(*, workspace: Workspace, user: User | AnonymousUser | None = None) -> dict[str, Any]:
    runs = Run.objects.filter(creation__workspace=workspace).select_related("creation", "creation__author")
    if user is not None:
        runs = runs.filter(creation__in=Creation.objects.filter(_visible_in_workspace(user)))
    return {
        "running_runs": list(runs.filter(status__in=ACTIVE_STATUSES)[:20]),
        "recent_runs": list(runs[:10]),
        "usage": workspace_usage(workspace=workspace),
    }


def gallery_artifacts(
    *, user: User | AnonymousUser, workspace: Workspace | None = None, kind: str = ""
) -> QuerySet[Artifact]:
    """Artifacts for a gallery: a workspace's (as this member sees them) or the public ones."""
    artifacts = Artifact.objects.select_related("run__creation__workspace")
    if workspace is None:
        artifacts = artifacts.filter(run__creation__visibility=Visibility.PUBLIC)
    else:
        visible = Creation.objects.filter(workspace=workspace).filter(_visible_in_workspace(user))
        artifacts = artifacts.filter(run__creation__in=visible)
    if kind:
        artifacts = artifacts.filter(kind=kind)
    return artifacts.order_by("-created_at", "path")
