"""What a run made: its files (artifacts), with their previews and pages."""

import uuid
from typing import Any

from django.db import models
from django.db.models import Q

from creations.models.run import Run
from workspaces.models import Workspace


class ArtifactKind(models.TextChoices):
    MAP = "map", "Map"
    HTML = "html", "Web page"
    IMAGE = "image", "Image"
    SVG = "svg", "Vector image"
    VIDEO = "video", "Video"
    AUDIO = "audio", "Audio"
    MIDI = "midi", "MIDI"
    PDF = "pdf", "PDF"
    MARKDOWN = "markdown", "Markdown"
    TEXT = "text", "Text or code"
    OTHER = "other", "File"


def artifact_upload_to(instance: "Artifact", filename: str) -> str:
    return f"artifacts/{instance.run_id}/{uuid.uuid4().hex}"


def preview_upload_to(instance: "Artifact", filename: str) -> str:
    return f"previews/{instance.run_id}/{uuid.uuid4().hex}.png"


def rendered_upload_to(instance: "Artifact", filename: str) -> str:
    return f"rendered/{instance.run_id}/{uuid.uuid4().hex}.html"


class Artifact(models.Model):
    """A file the agent left in /testbed/output, stored through Django's storage API."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="artifacts")
    # The run's workspace, kept on the artifact so a workspace's gallery is one index range
    # in gallery order, however many artifacts other workspaces have (filled on save).
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    path = models.CharField(max_length=1024, help_text="Relative to /testbed/output.")
    kind = models.CharField(max_length=10, choices=ArtifactKind.choices, default=ArtifactKind.OTHER)
    size = models.PositiveBigIntegerField()
    content_type = models.CharField(max_length=100)
    # Of the stored bytes, hex; blank for artifacts stored before it was recorded.
    sha256 = models.CharField(max_length=64, blank=True)
    file = models.FileField(upload_to=artifact_upload_to, max_length=300)
    # A PNG for the gallery. Made in a preview sandbox and only checked by signature here:
    # the worker and web processes never decode an image an agent influenced.
    preview = models.FileField(upload_to=preview_upload_to, max_length=300, null=True, blank=True)
    # A derived rendition for the browser (e.g. MIDI rendered to audio).
    rendition = models.FileField(upload_to=artifact_upload_to, max_length=300, null=True, blank=True)
    rendition_content_type = models.CharField(max_length=100, blank=True)
    # Markdown or code rendered to HTML at ingestion, sanitized (creations/artifacts/renderers.py).
    rendered = models.FileField(upload_to=rendered_upload_to, max_length=300, null=True, blank=True)
    # Bytes of the preview, rendition, rendering and pages together: stored beside the file, so they
    # count in the workspace's storage as its `size` does.
    derived_bytes = models.PositiveBigIntegerField(default=0)
    # What the agent said the file shows or says (its `<file>.alt.txt`, checked at ingestion:
    # creations/artifacts/sidecars.py): a picture's text alternative, an audio file's transcript.
    alt_text = models.TextField(blank=True)
    # A video's captions as WebVTT (its `<file>.vtt`, checked at ingestion).
    captions_vtt = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "path"]
        indexes = [
            # Galleries page newest first, by (created_at, id): a workspace's, and the public one.
            models.Index(fields=["workspace", "-created_at", "-id"], name="artifact_workspace_gallery"),
            models.Index(fields=["-created_at", "-id"], name="artifact_gallery"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["run", "path"], name="artifact_unique_path_per_run"),
            models.CheckConstraint(condition=Q(kind__in=ArtifactKind.values), name="artifact_kind_valid"),
            models.CheckConstraint(condition=~Q(path=""), name="artifact_path_not_empty"),
        ]

    def __str__(self) -> str:
        return self.path

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.workspace_id is None:
            self.workspace_id = Run.objects.values_list("creation__workspace_id", flat=True).get(pk=self.run_id)
        super().save(*args, **kwargs)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def page_upload_to(instance: "ArtifactPage", filename: str) -> str:
    return f"pages/{instance.artifact.run_id}/{uuid.uuid4().hex}.png"


class ArtifactPage(models.Model):
    """One page of a PDF artifact as a PNG, made in a preview sandbox (the platform never parses
    the PDF itself) and only checked by signature: the first PREVIEW_PDF_PAGES pages, for reading
    the document on its page."""

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField(help_text="From 1.")
    image = models.FileField(upload_to=page_upload_to, max_length=300)
    # From the PNG's header, so the page keeps its place while it loads.
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()

    class Meta:
        ordering = ["artifact", "number"]
        constraints = [
            models.UniqueConstraint(fields=["artifact", "number"], name="artifact_page_unique_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="artifact_page_number_from_one"),
        ]

    def __str__(self) -> str:
        return f"page {self.number} of {self.artifact_id}"
