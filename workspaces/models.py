from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from workspaces.fields import EncryptedTextField, SealedSecret


def default_run_max_steps() -> int:
    return int(settings.AGENT_MAX_STEPS)


def default_run_max_seconds() -> int:
    return int(settings.AGENT_MAX_WALL_SECONDS)


def default_quota_concurrent_runs() -> int:
    return int(settings.QUOTA_DEFAULT_CONCURRENT_RUNS)


def default_quota_month_sandbox_seconds() -> int:
    return int(settings.QUOTA_DEFAULT_MONTH_SANDBOX_SECONDS)


def default_quota_month_tokens() -> int:
    return int(settings.QUOTA_DEFAULT_MONTH_TOKENS)


def default_quota_storage_bytes() -> int:
    return int(settings.QUOTA_DEFAULT_STORAGE_BYTES)


class Workspace(models.Model):
    """A team (or one person's personal space) that owns creations and models."""

    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=60, unique=True)
    is_personal = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="workspaces")

    # Per-run limits applied when a creation does not ask for less; new workspaces
    # start from the agent's defaults (AGENT_MAX_STEPS, AGENT_MAX_WALL_SECONDS).
    run_max_steps = models.PositiveIntegerField(default=default_run_max_steps)
    run_max_seconds = models.PositiveIntegerField(default=default_run_max_seconds)
    run_max_tokens = models.PositiveIntegerField(default=2_000_000)

    # Quotas: how much of the platform the workspace may use (defaults from
    # settings, QUOTA_DEFAULT_*; staff change them per workspace in the admin).
    quota_concurrent_runs = models.PositiveIntegerField(
        default=default_quota_concurrent_runs, help_text="Runs at once; more wait in the queue."
    )
    quota_month_sandbox_seconds = models.PositiveBigIntegerField(
        default=default_quota_month_sandbox_seconds, help_text="Sandbox time per calendar month (UTC), in seconds."
    )
    quota_month_tokens = models.PositiveBigIntegerField(
        default=default_quota_month_tokens, help_text="Model tokens (prompt + completion) per calendar month (UTC)."
    )
    quota_storage_bytes = models.PositiveBigIntegerField(
        default=default_quota_storage_bytes, help_text="Bytes of artifacts kept at once."
    )
    # Viewers watch; when this is on they may also join the conversation under a creation.
    viewers_may_comment = models.BooleanField(
        default=False, help_text="Viewers may comment on the creations they see, as the other roles do."
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(run_max_steps__gte=1), name="workspace_run_max_steps_positive"),
            models.CheckConstraint(condition=Q(run_max_seconds__gte=1), name="workspace_run_max_seconds_positive"),
            models.CheckConstraint(condition=Q(run_max_tokens__gte=1), name="workspace_run_max_tokens_positive"),
            models.CheckConstraint(
                condition=Q(quota_concurrent_runs__gte=1), name="workspace_quota_concurrent_runs_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("workspace_dashboard", kwargs={"slug": self.slug})


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"
    VIEWER = "viewer", "Viewer"


# What each role may do; checked by workspaces.selectors / permissions.
ROLES_THAT_CREATE = {Role.OWNER, Role.ADMIN, Role.MEMBER}
ROLES_THAT_MANAGE = {Role.OWNER, Role.ADMIN}


class Membership(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="membership_unique_user_per_workspace"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    @property
    def can_create(self) -> bool:
        return self.role in ROLES_THAT_CREATE

    @property
    def can_manage(self) -> bool:
        return self.role in ROLES_THAT_MANAGE


class EndpointVerdict(models.TextChoices):
    """What the last "Test connection" found."""

    WORKS = "works", "Works"
    WRONG_KEY = "wrong_key", "Wrong key"
    UNKNOWN_MODEL = "unknown_model", "Unknown model"
    NO_TOOLS = "no_tools", "No tool calling"
    UNREACHABLE = "unreachable", "Unreachable"
    TLS_ERROR = "tls_error", "TLS error"
    TIMEOUT = "timeout", "Timed out"
    REFUSED_ADDRESS = "refused_address", "Address not allowed"
    REJECTED = "rejected", "Request rejected"
    SERVER_ERROR = "server_error", "Endpoint error"


class ModelEndpoint(models.Model):
    """An OpenAI-compatible model a workspace may use (OpenAI, vLLM, Ollama, ...).

    Written only through `workspaces.endpoints` (the key is write-only, a new
    host needs the key again); an endpoint that made creations is retired
    rather than deleted: its key is erased and it leaves every list, while
    those creations keep its name."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="model_endpoints")
    name = models.CharField(max_length=80, help_text="Shown in the model picker.")
    base_url = models.URLField(max_length=500, help_text="e.g. https://api.openai.com/v1")
    model = models.CharField(max_length=200, help_text="The model name the endpoint expects.")
    api_key = EncryptedTextField(blank=True, help_text="Stored encrypted; never enters a sandbox.")
    api_key_hint = models.CharField(max_length=4, blank=True, help_text="The key's last four characters.")
    extra_body = models.JSONField(default=dict, blank=True, help_text="Merged into each request body.")
    temperature = models.FloatField(default=0.7)
    max_tokens = models.PositiveIntegerField(null=True, blank=True, help_text="Per model reply.")
    is_enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    check_verdict = models.CharField(max_length=20, choices=EndpointVerdict.choices, blank=True)
    check_message = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "name"],
                condition=Q(retired_at__isnull=True),
                name="model_endpoint_unique_name_per_workspace",
            ),
            models.CheckConstraint(
                condition=Q(temperature__gte=0) & Q(temperature__lte=2), name="model_endpoint_temperature_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    @property
    def key_unreadable(self) -> bool:
        """Its stored key opens with none of FIELD_ENCRYPTION_KEYS (a key removed before
        rotating, a damaged row): it cannot be used until someone enters it again."""
        return isinstance(self.api_key, SealedSecret)


class Invitation(models.Model):
    """A single-use, expiring, revocable link into a workspace with a role.

    Only a hash of the token is stored: the link itself is shown once (and mailed,
    when an address is given), so a database dump admits nobody."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    email = models.EmailField(blank=True, help_text="Where the link was sent, if anywhere.")
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(role__in=Role.values), name="invitation_role_valid"),
        ]

    def __str__(self) -> str:
        return f"Invitation to {self.workspace} as {self.role}"
