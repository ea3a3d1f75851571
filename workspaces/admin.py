from django.contrib import admin
from django.http import HttpRequest

from workspaces.models import Membership, ModelEndpoint, Workspace


class MembershipInline(admin.TabularInline[Membership, Workspace]):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin[Workspace]):
    list_display = ["name", "slug", "is_personal", "created_at"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


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
