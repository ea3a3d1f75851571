from django.contrib import admin

from creations.models import Artifact, Creation, InputFile, Run, RunEvent


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
