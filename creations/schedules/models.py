from django.conf import settings
from django.db import models

from creations.models import Creation, Run
from creations.schedules.cadence import Cadence, describe


class Schedule(models.Model):
    """A creation refreshed on a schedule: at each time its cron line names, a new version made
    from the latest one with the standing instruction, as if the person who set it refined it."""

    creation = models.OneToOneField(Creation, on_delete=models.CASCADE, related_name="schedule")
    cadence = models.CharField(max_length=10, choices=Cadence.choices)
    # The line beat follows (UTC): daily and weekly are written as one too.
    cron = models.CharField(max_length=100)
    instruction = models.TextField()
    # Each refresh is a run in their name, counted in the workspace's budgets as theirs would be.
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    set_at = models.DateTimeField()
    next_run_at = models.DateTimeField(db_index=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    # Paused by itself (a budget used up, ...): it refreshes nothing until someone sets it again.
    paused_at = models.DateTimeField(null=True, blank=True)
    paused_reason = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"schedule of {self.creation_id}: {self.describe()}"

    def describe(self) -> str:
        return describe(self.cadence, self.cron)

    @property
    def is_paused(self) -> bool:
        return self.paused_at is not None


class ScheduledRefresh(models.Model):
    """One refresh a schedule started: its run, and once that succeeded, whether its files are
    identical (SHA-256) to the version it continued from; such a refresh is kept, but the creation
    goes on showing the version before it, and nobody is told of it."""

    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="refreshes")
    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="scheduled_refresh")
    due_at = models.DateTimeField()
    files_identical = models.BooleanField(null=True, blank=True)  # None: not ended, or not succeeded

    class Meta:
        ordering = ["-due_at", "-pk"]

    def __str__(self) -> str:
        return f"refresh {self.run_id} of schedule {self.schedule_id}"
