"""Reads for creations, runs and artifacts."""

from typing import Any

from creations.models import ACTIVE_STATUSES, Run
from workspaces.models import Workspace


def dashboard_context(*, workspace: Workspace) -> dict[str, Any]:
    runs = Run.objects.filter(creation__workspace=workspace).select_related("creation", "creation__author")
    return {
        "running_runs": list(runs.filter(status__in=ACTIVE_STATUSES)[:20]),
        "recent_runs": list(runs[:10]),
    }
