from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest

from creations.models import Artifact, Creation, InputFile, Run, RunEvent
from creations.usage.budgets import quota_below_use_warnings
from workspaces.admin import WorkspaceAdmin
from workspaces.models import Workspace


class InputFileInline(admin.TabularInline[InputFile, Creation]):
    model = InputFile
    extra = 0


@admin.register(Creation)
class CreationAdmin(admin.ModelAdmin[Creation]):
    list_display = ["__str__", "workspace", "author", "visibility", "created_at"]
    list_filter = ["visibility"]
    search_fields = ["title", "brief"]
    raw_id_fields = ["author", "forked_from"]
    inlines = [InputFileInline]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin[Run]):
    list_display = ["pk", "creation", "status", "created_at", "finished_at", "steps"]
    list_filter = ["status"]
    raw_id_fields = ["creation"]
    readonly_fields = ["last_seq", "heartbeat_at"]


@admin.register(RunEvent)
class RunEventAdmin(admin.ModelAdmin[RunEvent]):
    list_display = ["run", "seq", "kind", "created_at"]
    list_filter = ["kind"]
    raw_id_fields = ["run"]


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin[Artifact]):
    list_display = ["path", "run", "kind", "size", "content_type"]
    list_filter = ["kind"]
    raw_id_fields = ["run"]


class WorkspaceWithUsageAdmin(WorkspaceAdmin):
    """The workspace admin, which tells staff when a quota they set is below what
    the workspace already uses (the teams app knows nothing of usage, so the
    warning is added here)."""

    def save_model(self, request: HttpRequest, obj: Workspace, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if change:
            for warning in quota_below_use_warnings(obj):
                messages.warning(request, warning)


admin.site.unregister(Workspace)
admin.site.register(Workspace, WorkspaceWithUsageAdmin)
