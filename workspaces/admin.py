from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from workspaces.models import Membership, ModelEndpoint, Workspace


class MembershipInline(admin.TabularInline[Membership, Workspace]):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


# Upper bounds that catch a slip of the keyboard (an extra three zeros), far above any real team.
QUOTA_MAXIMA = {
    "quota_concurrent_runs": 1000,
    "quota_month_sandbox_seconds": 10**9,
    "quota_month_tokens": 10**12,
    "quota_storage_bytes": 100 * 1024**4,
    "run_max_steps": 10_000,
    "run_max_seconds": 7 * 24 * 3600,
    "run_max_tokens": 10**10,
}


# A month's budget of zero is a real choice (a workspace that may only look); the rest need at least 1.
ZERO_ALLOWED = {"quota_month_sandbox_seconds", "quota_month_tokens", "quota_storage_bytes"}


class WorkspaceQuotaForm(forms.ModelForm[Workspace]):
    class Meta:
        model = Workspace
        fields = ["name", "slug", "is_personal", *QUOTA_MAXIMA]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name, maximum in QUOTA_MAXIMA.items():
            value = data.get(name)
            if value is None:
                continue
            if value < (0 if name in ZERO_ALLOWED else 1):
                self.add_error(name, "Give a positive number.")
            elif value > maximum:
                self.add_error(name, f"At most {maximum:,}: is there a zero too many?")
        return data


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin[Workspace]):
    form = WorkspaceQuotaForm
    list_display = ["name", "slug", "is_personal", "quota_concurrent_runs", "quota_month_tokens", "created_at"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]
    fieldsets = [
        (None, {"fields": ["name", "slug", "is_personal"]}),
        (
            "Quotas",
            {
                "fields": [
                    "quota_concurrent_runs",
                    "quota_month_tokens",
                    "quota_month_sandbox_seconds",
                    "quota_storage_bytes",
                ],
                "description": "Take effect for new runs; runs going now keep running.",
            },
        ),
        ("Per-run ceilings", {"fields": ["run_max_steps", "run_max_seconds", "run_max_tokens"]}),
    ]


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin[ModelEndpoint]):
    """Staff may look and switch an endpoint off; teams add and edit them in the
    workspace's Models page (`workspaces.endpoints`), where the address rules
    and the key rules live. The key itself is not a field here at all."""

    list_display = ["name", "workspace", "model", "base_url", "api_key_hint", "is_enabled", "retired_at"]
    list_filter = ["is_enabled"]
    search_fields = ["name", "model", "workspace__name"]
    shown: tuple[str, ...] = (
        "workspace",
        "name",
        "base_url",
        "model",
        "api_key_hint",
        "extra_body",
        "temperature",
        "max_tokens",
        "is_enabled",
        "retired_at",
        "checked_at",
        "check_verdict",
        "check_message",
    )
    fields = shown
    readonly_fields = tuple(field for field in shown if field != "is_enabled")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
