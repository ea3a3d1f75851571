import django.db.models.deletion
from django.db import migrations, models


def fill_workspace(apps, schema_editor):
    Artifact = apps.get_model("creations", "Artifact")
    Run = apps.get_model("creations", "Run")
    for run_id, workspace_id in (
        Run.objects.filter(artifacts__isnull=False).values_list("pk", "creation__workspace_id").distinct()
    ):
        Artifact.objects.filter(run_id=run_id).update(workspace_id=workspace_id)


class Migration(migrations.Migration):
    dependencies = [
        ("creations", "0002_run_cancelled_by"),
        ("workspaces", "0002_workspace_limits_default_from_agent_settings"),
    ]

    operations = [
        migrations.AddField(
            model_name="artifact",
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
            model_name="artifact",
            name="workspace",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="workspaces.workspace",
            ),
        ),
        migrations.AddIndex(
            model_name="artifact",
            index=models.Index(fields=["workspace", "-created_at", "-id"], name="artifact_workspace_gallery"),
        ),
        migrations.AddIndex(
            model_name="artifact",
            index=models.Index(fields=["-created_at", "-id"], name="artifact_gallery"),
        ),
    ]
