"""What the API keeps: personal access tokens, and the runs made under an idempotency key."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class TokenScope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Read and write"


class PersonalAccessToken(models.Model):
    """A person's key to the API. Only a hash of the secret is kept; the short
    `lookup` finds the row without comparing hashes across the table."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_tokens")
    name = models.CharField(max_length=100)
    lookup = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    scope = models.CharField(max_length=8, choices=TokenScope.choices, default=TokenScope.READ)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(scope__in=TokenScope.values), name="access_token_scope_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"

    @property
    def can_write(self) -> bool:
        return self.scope == TokenScope.WRITE

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @property
    def is_usable(self) -> bool:
        return self.revoked_at is None and not self.is_expired


class IdempotentRequest(models.Model):
    """A run created under a client's `Idempotency-Key`: the same key again returns
    this run instead of making another. The fingerprint of the request body tells
    a retry from a different request reusing the key."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    run = models.ForeignKey("creations.Run", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="idempotent_request_key_unique")]

    def __str__(self) -> str:
        return f"{self.key} → run {self.run_id}"


def staged_upload_to(instance: StagedInput, filename: str) -> str:
    return f"staged-inputs/{instance.workspace_id}/{uuid.uuid4().hex}"


class StagedInput(models.Model):
    """A file uploaded through the API before the run that uses it is created
    (`input_ids`). Creating the run moves it into the creation's inputs; one that
    no run takes expires (api/inputs.py)."""

    workspace = models.ForeignKey("workspaces.Workspace", on_delete=models.CASCADE, related_name="+")
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=255)
    # The name it was sent with, when the platform had to change it; blank: kept. The run that takes
    # the file names it so again, and the creation keeps the change (InputFile.original_name).
    original_name = models.CharField(max_length=255, blank=True)
    file = models.FileField(upload_to=staged_upload_to, max_length=300)
    size = models.PositiveBigIntegerField()
    content_type = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return self.name
