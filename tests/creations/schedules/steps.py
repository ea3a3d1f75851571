"""What the schedule tests do without a worker: a run ended as its worker would end it, beat's tick
at a chosen time (each with its on-commit callbacks run, as after a real commit)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from creations.models import Run, RunStatus
from creations.runs.state import run_finish
from creations.schedules.services import schedules_refresh_due
from tests.support.artifacts import Output, add_artifact

MONDAY = datetime(2026, 1, 5, 5, 0, tzinfo=UTC)
INSTRUCTION = "update the figures with this week's data"


def ended(run: Run, files: dict[str, bytes], status: RunStatus = RunStatus.SUCCEEDED) -> Run:
    """`run` ended by its worker with these files in its output."""
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    for path, data in files.items():
        add_artifact(run, Output(path, data))
    assert run_finish(run_id=run.pk, status=status, reason="ended")
    run.refresh_from_db()
    return run


def tick(now: datetime, capture: Any) -> list[Run]:
    with capture(execute=True):
        return schedules_refresh_due(now=now)
