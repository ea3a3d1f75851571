from django.conf import settings
from django.db import models
from django.db.models import Q

from creations.models import Creation, Run
from workspaces.models import Workspace


class ShareLink(models.Model):
    """A link that shows one creation's artifacts, read-only, to anyone who has it: the version
    the creation shows (it follows a restore), or one version pinned. Only a hash of its token
    is kept: the link itself is shown once, to the person who made it."""

    # The creation's workspace, kept here so a workspace's links are one index range.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    creation = models.ForeignKey(Creation, on_delete=models.CASCADE, related_name="share_links")
    # The version pinned; None: whichever the creation shows when the link is opened.
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    label = models.CharField(max_length=100, blank=True, help_text="Who it is for, in the maker's words.")
    token_hash = models.CharField(max_length=64, unique=True)
    # The token's last characters, so that people tell their links apart without the link itself.
    token_hint = models.CharField(max_length=4)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    view_count = models.PositiveBigIntegerField(default=0)
    last_viewed_at = models.DateTimeField(null=True, blank=True)
    # An API client's Idempotency-Key and the fingerprint of what it asked with it (blank: none sent).
    idempotency_key = models.CharField(max_length=255, blank=True)
    request_fingerprint = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["workspace", "-created_at"], name="share_link_workspace_newest")]
        constraints = [
            models.UniqueConstraint(
                fields=["created_by", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="share_link_idempotency_key_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"share link …{self.token_hint} to {self.creation_id}"
