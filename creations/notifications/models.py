from django.conf import settings
from django.db import models
from django.db.models import Q

from creations.comments.models import Comment
from creations.models import Creation, Run
from workspaces.models import Workspace


class Kind(models.TextChoices):
    RUN_SUCCEEDED = "run_succeeded", "A run finished"
    RUN_FAILED = "run_failed", "A run failed or stopped"
    RUN_WAITING = "run_waiting", "A run waits for the workspace's quota"
    COMMENT = "comment", "A comment on your work, or on work you follow"
    MENTION = "mention", "Someone mentions you in a comment"
    INVITATION = "invitation", "You are invited to a workspace"
    SCHEDULE_REFRESHED = "schedule_refreshed", "A scheduled refresh made a new version"
    SCHEDULE_PAUSED = "schedule_paused", "A schedule you set paused itself"


# Kinds mailed by the invitation itself (workspaces.invitations), to the address it names: the
# platform never mails them a second time, so they have no e-mail switch.
KINDS_NOT_MAILED = frozenset({Kind.INVITATION})


class EmailStatus(models.TextChoices):
    NOT_WANTED = "not_wanted", "Not wanted"  # switched off, no address, or a kind never mailed
    PENDING = "pending", "Waiting to be sent"
    SENDING = "sending", "Being sent"
    SENT = "sent", "Sent"
    FAILED = "failed", "Could not be sent"


class Notification(models.Model):
    """One event told to one person: at most one per (person, event), whatever retries happen."""

    recipient = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # What happened, e.g. "run:42:ended" or "comment:7:mention": the same event gives the same key.
    event_key = models.CharField(max_length=100)
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    creation = models.ForeignKey(Creation, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    comment = models.ForeignKey(Comment, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    title = models.CharField(max_length=300)  # one line: the list's entry and the e-mail's subject
    body = models.TextField(blank=True)
    # Where it leads on the platform, as a path; e-mails make it absolute with SITE_URL. Blank: nowhere.
    path = models.CharField(max_length=500, blank=True)
    # False when its person switched this kind off in the page but on by e-mail.
    in_page = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    email_status = models.CharField(max_length=12, choices=EmailStatus.choices, default=EmailStatus.NOT_WANTED)
    emailed_at = models.DateTimeField(null=True, blank=True)
    email_attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["recipient", "-created_at"], name="notification_recipient_newest"),
            # The bell counts a person's unread notifications among those alone.
            models.Index(fields=["recipient"], condition=Q(read_at__isnull=True), name="notification_unread"),
            models.Index(fields=["email_status", "created_at"], name="notification_email_status"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["recipient", "event_key"], name="notification_once_per_event"),
            models.CheckConstraint(condition=Q(kind__in=Kind.values), name="notification_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.recipient_id}: {self.title}"


class NotificationSetting(models.Model):
    """One person's choice for one kind; a kind without a row is on in the page and by e-mail."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    in_page = models.BooleanField(default=True)
    email = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="notification_setting_once_per_kind"),
            models.CheckConstraint(condition=Q(kind__in=Kind.values), name="notification_setting_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.kind}: page {self.in_page}, email {self.email}"


class Follow(models.Model):
    """A person who hears about a creation's runs and comments as its author does."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    creation = models.ForeignKey(Creation, on_delete=models.CASCADE, related_name="follows")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "creation"], name="follow_once_per_creation")]

    def __str__(self) -> str:
        return f"{self.user_id} follows {self.creation_id}"
