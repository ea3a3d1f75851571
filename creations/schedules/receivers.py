"""A refresh's run ended (creations.runs.signals): settle it (`services.scheduled_refresh_ended`)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.dispatch import receiver

from creations.runs.signals import run_finished
from creations.schedules.models import ScheduledRefresh
from creations.schedules.services import scheduled_refresh_ended


@receiver(run_finished, dispatch_uid="schedules-run-finished")
def _run_finished(sender: Any, *, run_id: int, status: str, **kwargs: Any) -> None:
    refresh = ScheduledRefresh.objects.select_related("run", "schedule__creation").filter(run_id=run_id).first()
    if refresh is not None:
        with transaction.atomic():
            scheduled_refresh_ended(refresh=refresh, status=status)
