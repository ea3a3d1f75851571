import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Q, Subquery


def fill_workspace(apps, schema_editor):
    """Every run's workspace is its creation's: one UPDATE for all of them."""
    Creation = apps.get_model("creations", "Creation")
    Run = apps.get_model("creations", "Run")
    Run.objects.update(
        workspace_id=Subquery(Creation.objects.filter(pk=OuterRef("creation_id")).values("workspace_id")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [
        ("creations", "0013_merge_0011_input_original_name_0012_run_queued_index"),
        ("workspaces", "0005_workspace_quotas"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="workspace",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="workspaces.workspace",
            ),
        ),
        migrations.RunPython(fill_workspace, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="run",
            name="workspace",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="workspaces.workspace",
            ),
        ),
        migrations.RemoveIndex(model_name="run", name="run_queued"),
        migrations.RemoveIndex(model_name="run", name="run_started_at"),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                condition=Q(("status", "queued")),
                fields=["workspace", "created_at", "id"],
                name="run_queued_in_workspace",
            ),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                condition=Q(("status__in", ("starting", "running"))),
                fields=["workspace"],
                name="run_in_flight_in_workspace",
            ),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(fields=["workspace", "started_at"], name="run_started_in_workspace"),
        ),
    ]
