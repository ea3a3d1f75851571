"""What a person asked for: a creation, its brief and the files given with it."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from workspaces.models import ModelEndpoint, Workspace


class Visibility(models.TextChoices):
    PRIVATE = "private", "Only me"
    WORKSPACE = "workspace", "Workspace members"
    PUBLIC = "public", "Anyone with the link (and the public gallery)"


TITLE_MAX_CHARS = 200


class Creation(models.Model):
    """What a person asked for: the brief, its inputs, the model and the limits."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="creations")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="creations")
    title = models.CharField(max_length=TITLE_MAX_CHARS, blank=True)
    brief = models.TextField()
    visibility = models.CharField(max_length=10, choices=Visibility.choices, default=Visibility.WORKSPACE)
    # No endpoint means the built-in demo model (a replay of bundled trajectories).
    model_endpoint = models.ForeignKey(
        ModelEndpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="creations"
    )
    max_steps = models.PositiveIntegerField(null=True, blank=True)
    max_seconds = models.PositiveIntegerField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    forked_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks")
    # The version the gallery shows: the latest that succeeded, or one a member restored.
    shown_run = models.ForeignKey("Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # How often people other than its author opened its page or one of its files: the gallery's "most viewed".
    view_count = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["workspace", "-created_at"]),
            models.Index(fields=["visibility", "-created_at"]),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(visibility__in=Visibility.values), name="creation_visibility_valid"),
            models.CheckConstraint(condition=~Q(brief=""), name="creation_brief_not_empty"),
            models.CheckConstraint(
                condition=Q(max_steps__isnull=True) | Q(max_steps__gte=1), name="creation_max_steps_positive"
            ),
            models.CheckConstraint(
                condition=Q(max_seconds__isnull=True) | Q(max_seconds__gte=1), name="creation_max_seconds_positive"
            ),
            models.CheckConstraint(
                condition=Q(max_tokens__isnull=True) | Q(max_tokens__gte=1), name="creation_max_tokens_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.title or self.brief[:60]

    def get_absolute_url(self) -> str:
        return reverse("creation_detail", kwargs={"pk": self.pk})


def input_upload_to(instance: "InputFile", filename: str) -> str:
    return f"inputs/{instance.creation.workspace_id}/{instance.creation_id}/{uuid.uuid4().hex}"


class InputFile(models.Model):
    """A file the person gave with the brief; copied to /testbed/input/<name>."""

    creation = models.ForeignKey(Creation, on_delete=models.CASCADE, related_name="inputs")
    name = models.CharField(max_length=255)
    # The name it was sent with, when the platform had to change it (creations.runs.inputs); blank: kept.
    original_name = models.CharField(max_length=255, blank=True)
    file = models.FileField(upload_to=input_upload_to, max_length=300)
    size = models.PositiveBigIntegerField()
    content_type = models.CharField(max_length=100, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["creation", "name"], name="input_file_unique_name_per_creation")]

    def __str__(self) -> str:
        return self.name
