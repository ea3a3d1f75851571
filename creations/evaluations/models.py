"""Suites (tasks with expected answers and a scoring rule) and evaluations (a suite run against one
to four of a workspace's models, in sandbox mode, plain mode or both), one `EvaluationItem` per
task by model by mode."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from creations.evaluations.scoring import RULE_LABELS, Rule
from creations.models import Run
from workspaces.models import ModelEndpoint, Workspace

MAX_MODELS = 4


class Suite(models.Model):
    """Tasks a member uploaded (or a sample the platform ships), kept as they were read."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="evaluation_suites")
    name = models.CharField(max_length=200)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    # A sample written for the platform (not any paper's data set): the pages label it so.
    is_sample = models.BooleanField(default=False)
    task_count = models.PositiveIntegerField(default=0)
    # The task file's size as uploaded: its tasks are kept in rows, and count in the storage quota as it did.
    task_file_bytes = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.name


class SuiteTask(models.Model):
    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="tasks")
    position = models.PositiveIntegerField()
    task_id = models.CharField(max_length=100)
    prompt = models.TextField()
    plain_prompt = models.TextField(blank=True)  # what plain mode asks instead, when given
    rule = models.CharField(max_length=16, choices=[(rule.value, RULE_LABELS[rule]) for rule in Rule])
    expected = models.TextField(blank=True)
    options = models.JSONField(default=dict, blank=True)
    file_names = models.JSONField(default=list, blank=True)  # of the suite's files, given to this task

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["suite", "task_id"], name="suite_task_id_unique")]

    def __str__(self) -> str:
        return f"{self.task_id} of {self.suite_id}"


def suite_file_upload_to(instance: SuiteFile, filename: str) -> str:
    return f"suites/{instance.suite.workspace_id}/{instance.suite_id}/{uuid.uuid4().hex}"


class SuiteFile(models.Model):
    """An input file the suite's tasks name, given to each such task's run in /testbed/input."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=255)
    file = models.FileField(upload_to=suite_file_upload_to, max_length=300)
    size = models.PositiveBigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["suite", "name"], name="suite_file_name_unique")]

    def __str__(self) -> str:
        return self.name


class Mode(models.TextChoices):
    SANDBOX = "sandbox", "sandbox"
    PLAIN = "plain", "plain"


class Modes(models.TextChoices):
    SANDBOX = "sandbox", "Sandbox: each task is a run with a computer"
    PLAIN = "plain", "Plain: one chat completion, no tools"
    BOTH = "both", "Both, to compare"

    @staticmethod
    def expand(modes: str) -> list[str]:
        return [Mode.SANDBOX, Mode.PLAIN] if modes == Modes.BOTH else [modes]


class EvaluationStatus(models.TextChoices):
    RUNNING = "running", "running"
    FINISHED = "finished", "finished"
    CANCELLED = "cancelled", "cancelled"


class Evaluation(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="evaluations")
    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="evaluations")
    # Its sandbox tasks are runs in their name, counted in the workspace's budgets as theirs would be.
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    modes = models.CharField(max_length=10, choices=Modes.choices)
    status = models.CharField(max_length=10, choices=EvaluationStatus.choices, default=EvaluationStatus.RUNNING)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"evaluation {self.pk} of {self.suite_id}"

    @property
    def is_running(self) -> bool:
        return self.status == EvaluationStatus.RUNNING


class ItemStatus(models.TextChoices):
    PENDING = "pending", "waiting"
    IN_FLIGHT = "in_flight", "going"
    SCORED = "scored", "scored"
    FAILED = "failed", "failed"  # no answer to score: the run or the model failed (scored as wrong)
    CANCELLED = "cancelled", "cancelled"


ITEM_FINAL = (ItemStatus.SCORED, ItemStatus.FAILED, ItemStatus.CANCELLED)


class EvaluationItem(models.Model):
    """One task of the suite, answered by one model in one mode."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="items")
    task = models.ForeignKey(SuiteTask, on_delete=models.CASCADE, related_name="+")
    model_endpoint = models.ForeignKey(ModelEndpoint, null=True, on_delete=models.SET_NULL, related_name="+")
    model_name = models.CharField(max_length=80)  # the endpoint's name when the evaluation started
    mode = models.CharField(max_length=10, choices=Mode.choices)
    position = models.PositiveIntegerField()  # the order items are released in
    status = models.CharField(max_length=10, choices=ItemStatus.choices, default=ItemStatus.PENDING)
    run = models.OneToOneField(Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="evaluation_item")
    answer = models.TextField(blank=True)
    answer_source = models.CharField(max_length=40, blank=True)  # "answer.txt", "final message", "reply"
    read = models.TextField(blank=True)  # what the rule read from the answer
    correct = models.BooleanField(null=True)
    why = models.TextField(blank=True)  # why it scored wrong, or why there was no answer
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    seconds = models.FloatField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["position"]
        indexes = [models.Index(fields=["evaluation", "status"], name="evaluation_item_status")]

    def __str__(self) -> str:
        return f"{self.task_id} · {self.model_name} · {self.mode}"

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens
