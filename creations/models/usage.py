"""What runs cost: the append-only ledger every usage figure is read from."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from creations.models.creation import Creation
from creations.models.run import Run, RunStatus
from workspaces.models import ModelEndpoint, Workspace


class UsageSource(models.TextChoices):
    RUN = "run", "a run"
    # A model call that was never a creation's run (an evaluation's plain-mode task): it has no
    # creation to delete, so its title is shown as it was kept.
    EVALUATION = "evaluation", "an evaluation's plain task"


class UsageRecord(models.Model):
    """What one run cost, written once when it ends: append-only, the source of
    every usage figure (dashboard, usage page, budgets). It outlives the run
    and its creation, so deleting work never rewrites what was spent."""

    run = models.OneToOneField(Run, null=True, on_delete=models.SET_NULL, related_name="usage_record")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="usage_records")
    creation = models.ForeignKey(Creation, null=True, on_delete=models.SET_NULL, related_name="usage_records")
    creation_title = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=16, choices=UsageSource.choices, default=UsageSource.RUN)
    person = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    model_endpoint = models.ForeignKey(
        ModelEndpoint, null=True, on_delete=models.SET_NULL, related_name="usage_records"
    )
    model_name = models.CharField(max_length=200, help_text="The model's name when the run ended (demo included).")
    status = models.CharField(max_length=16, choices=RunStatus.choices)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    sandbox_seconds = models.FloatField(default=0)
    bytes_stored = models.PositiveBigIntegerField(default=0)
    recorded_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-recorded_at"]
        indexes = [models.Index(fields=["workspace", "recorded_at"])]
        constraints = [
            models.CheckConstraint(condition=Q(sandbox_seconds__gte=0), name="usage_sandbox_seconds_non_negative"),
        ]

    def __str__(self) -> str:
        return f"usage of run {self.run_id} in {self.workspace_id}"

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens
