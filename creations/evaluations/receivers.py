"""A sandbox task's run ended (creations.runs.signals): score it and release the next tasks."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from creations.evaluations.services import evaluation_run_ended
from creations.runs.signals import run_finished


@receiver(run_finished, dispatch_uid="evaluations-run-finished")
def _run_finished(sender: Any, *, run_id: int, status: str, **kwargs: Any) -> None:
    evaluation_run_ended(run_id=run_id)
