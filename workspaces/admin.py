from typing import Any

from django import forms
from django.contrib import admin

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


class ModelEndpointForm(forms.ModelForm[ModelEndpoint]):
    # Write-only: the stored key is never sent back to the browser; leave the
    # field empty to keep it.
    api_key = forms.CharField(required=False, widget=forms.PasswordInput(render_value=False))

    class Meta:
        model = ModelEndpoint
        fields = [
            "workspace",
            "name",
            "base_url",
            "model",
            "api_key",
            "extra_body",
            "temperature",
            "max_tokens",
            "is_enabled",
        ]

    def clean_api_key(self) -> Any:
        key = self.cleaned_data.get("api_key")
        return key or (self.instance.api_key if self.instance.pk else "")


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin[ModelEndpoint]):
    form = ModelEndpointForm
    list_display = ["name", "workspace", "model", "base_url", "is_enabled"]
    list_filter = ["is_enabled"]
    search_fields = ["name", "model", "workspace__name"]
