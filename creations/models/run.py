"""A run of a creation: its status, its trajectory of events, the /testbed it left and what people told it."""

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.urls import reverse

from creations.models.creation import Creation
from workspaces.models import Workspace


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    STARTING = "starting", "Starting"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    TIMED_OUT = "timed_out", "Timed out"
    # The run reached its own step or token limit (what it asked for, within the workspace's ceilings).
    LIMIT_REACHED = "limit_reached", "Limit reached"
    # The workspace's monthly budget (tokens, sandbox time) ran out while it ran.
    QUOTA_EXCEEDED = "quota_exceeded", "Quota exceeded"


# Runs holding (or about to hold) a sandbox: each takes one of its workspace's concurrent slots,
# its worker beats its heartbeat, and its usage is live on its row, not yet in the ledger.
IN_FLIGHT_STATUSES = (RunStatus.STARTING, RunStatus.RUNNING)
# Runs not ended: waiting for a slot, or in flight.
ACTIVE_STATUSES = (RunStatus.QUEUED, *IN_FLIGHT_STATUSES)
# The columns that count a run's usage live while it works: steps' events add to them as they are
# stored (creations/events/store.py), and the usage services read and write them (creations/usage/).
LIVE_COUNTERS = frozenset({"steps", "prompt_tokens", "completion_tokens", "sandbox_seconds", "output_bytes"})
FINAL_STATUSES = (
    RunStatus.SUCCEEDED,
    RunStatus.FAILED,
    RunStatus.CANCELLED,
    RunStatus.TIMED_OUT,
    RunStatus.LIMIT_REACHED,
    RunStatus.QUOTA_EXCEEDED,
)


class Run(models.Model):
    """One attempt at a creation: a sandbox, an agent loop, a trajectory, artifacts."""

    creation = models.ForeignKey(Creation, on_delete=models.CASCADE, related_name="runs")
    # Its creation's workspace, kept on the run (filled on save) so that admission reads a
    # workspace's queued and going runs from indexes of their own, without joining creations.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    # Runs are the creation's versions, numbered from 1 in the order they were asked for.
    version = models.PositiveIntegerField()
    # The version this one continues from (a refine); None for a first version or a run from scratch.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children")
    # What should change, for a refine; blank when the run works from the brief alone.
    instruction = models.TextField(blank=True)
    # The agent's own summary of what it made (what it said at submit): carried into later versions.
    summary = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    reason = models.TextField(blank=True, help_text="Why the run ended (or is waiting).")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Since when a queued run has had a free slot in its workspace, as the reaper last saw it
    # (creations.runs.admission): "queued too long" counts from here, so waiting for the
    # workspace's own runs to end never counts against a run.
    admissible_since = models.DateTimeField(null=True, blank=True)
    # Who asked for this run: the author for a first run, whoever re-ran it or forked it otherwise.
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Started by a schedule (creations.schedules) in its setter's name: the schedule tells of its
    # success itself, and only when its files changed, so it is never told as a run that finished.
    scheduled = models.BooleanField(default=False)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    worker = models.CharField(max_length=200, blank=True, help_text="Celery worker hostname running it.")
    # The worker host (SANDBOX_HOST_ID) whose engine runs its sandbox: said when that host is lost.
    sandbox_host = models.CharField(max_length=63, blank=True)
    sandbox_id = models.CharField(max_length=100, blank=True)
    # Usage counters.
    steps = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    sandbox_seconds = models.FloatField(default=0)
    output_bytes = models.PositiveBigIntegerField(default=0)
    last_seq = models.PositiveIntegerField(default=0, help_text="Highest RunEvent.seq stored.")
    # Bytes of the files its events' long fields went to (creations.events.store): they stay in
    # storage as long as the run, so they count in its workspace's storage.
    event_file_bytes = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"]),
            # Admission (creations.runs.admission) reads, per workspace: its queued runs in order
            # (also counted against its queue's bound at each submission, and ahead of a new run),
            # found among the runs queued now however many have ever run; its runs in flight; and
            # when it last had a run started.
            models.Index(
                fields=["workspace", "created_at", "id"], condition=Q(status="queued"), name="run_queued_in_workspace"
            ),
            models.Index(
                fields=["workspace"], condition=Q(status__in=IN_FLIGHT_STATUSES), name="run_in_flight_in_workspace"
            ),
            models.Index(fields=["workspace", "started_at"], name="run_started_in_workspace"),
            # A workspace's storage in use sums the event files of the runs that have any, not of every run.
            models.Index(fields=["creation"], condition=Q(event_file_bytes__gt=0), name="run_event_files"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=RunStatus.values), name="run_status_valid"),
            # A run has a finish time exactly when it is in a final status.
            models.CheckConstraint(
                condition=(Q(status__in=FINAL_STATUSES) & Q(finished_at__isnull=False))
                | (~Q(status__in=FINAL_STATUSES) & Q(finished_at__isnull=True)),
                name="run_finished_at_iff_final",
            ),
            models.CheckConstraint(
                condition=Q(started_at__isnull=True) | Q(started_at__gte=F("created_at")),
                name="run_started_after_created",
            ),
            models.CheckConstraint(condition=Q(sandbox_seconds__gte=0), name="run_sandbox_seconds_non_negative"),
            models.UniqueConstraint(fields=["creation", "version"], name="run_unique_version_per_creation"),
            models.CheckConstraint(condition=Q(version__gte=1), name="run_version_positive"),
        ]

    def __str__(self) -> str:
        return f"Run {self.pk} ({self.status})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.workspace_id is None and self.creation_id is not None:
            self.workspace_id = self.creation.workspace_id
        if self.version is None:
            # The next number of its creation. Services lock the creation's row first
            # (creations.runs.state.run_create_queued), so two runs never get the same one.
            latest = Run.objects.filter(creation_id=self.creation_id).aggregate(latest=models.Max("version"))["latest"]
            self.version = (latest or 0) + 1
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("run_detail", kwargs={"pk": self.pk})

    @property
    def label(self) -> str:
        return f"v{self.version}"

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class RunEvent(models.Model):
    """One thing that happened in a run, in order; the source of truth for the live view."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=40)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["run", "seq"], name="run_event_unique_seq"),
            models.CheckConstraint(condition=Q(seq__gte=1), name="run_event_seq_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.seq} {self.kind}"


def snapshot_upload_to(instance: "RunSnapshot", filename: str) -> str:
    return f"snapshots/{instance.workspace_id}/{instance.run_id}/{uuid.uuid4().hex}.tar.zst"


class RunSnapshot(models.Model):
    """The whole /testbed a run left (inputs, outputs, work files), compressed: where the
    next version of its creation starts. Bounded by RUN_SNAPSHOT_MAX_BYTES; a tree over
    the bound keeps output/ only and `left_out` says so."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="snapshot")
    # Kept here so the workspace's storage in use is one sum (as for artifacts).
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    file = models.FileField(upload_to=snapshot_upload_to, max_length=300)
    size = models.PositiveBigIntegerField()
    # What was not kept, in words a person reads; blank when the whole /testbed is in it.
    left_out = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"snapshot of run {self.run_id}"


class RunMessage(models.Model):
    """Something a person told a running agent; it reaches the model before its next request."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="messages")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    author_name = models.CharField(max_length=150)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "created_at", "pk"]
        indexes = [models.Index(fields=["run", "delivered_at"], name="run_message_pending")]
        constraints = [models.CheckConstraint(condition=~Q(text=""), name="run_message_text_not_empty")]

    def __str__(self) -> str:
        return f"message to run {self.run_id}"
