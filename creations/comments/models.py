from django.conf import settings
from django.db import models

from creations.models import Creation, Run
from workspaces.models import Workspace

COMMENT_MAX_CHARS = 5000


class Comment(models.Model):
    """Something a member said about a creation, or about one of its versions (`run`)."""

    # The creation's workspace, kept here so permission checks need no join.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    creation = models.ForeignKey(Creation, on_delete=models.CASCADE, related_name="comments")
    # The version it is about; None: the creation as a whole.
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.CASCADE, related_name="comments")
    # Kept when its author's account is deleted: the conversation keeps its shape.
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    text = models.TextField()
    # The members the text mentions (@username) who could see the creation when it was written.
    mentioned = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["creation", "created_at"], name="comment_creation_oldest")]
        constraints = [models.CheckConstraint(condition=~models.Q(text=""), name="comment_text_not_empty")]

    def __str__(self) -> str:
        return f"comment {self.pk} on {self.creation_id}"
