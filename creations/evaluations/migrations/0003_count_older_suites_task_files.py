"""Suites uploaded before their task file was counted in the storage quota kept 0 bytes for it.
The file itself was never kept, only its tasks' rows: count each task as the JSON line that
describes it (the format's own fields, in its order), which is what the file held."""

import json

from django.db import migrations


def _task_line(task) -> str:
    line = {"id": task.task_id, "prompt": task.prompt}
    if task.plain_prompt:
        line["plain_prompt"] = task.plain_prompt
    line["rule"] = task.rule
    if task.expected:
        line["expected"] = task.expected
    line.update(task.options or {})
    if task.file_names:
        line["files"] = task.file_names
    return json.dumps(line, ensure_ascii=False)


def count_older_task_files(apps, schema_editor):
    Suite = apps.get_model("evaluations", "Suite")
    SuiteTask = apps.get_model("evaluations", "SuiteTask")
    for suite_id in Suite.objects.filter(task_file_bytes=0, task_count__gt=0).values_list("pk", flat=True).iterator():
        lines = [_task_line(task) for task in SuiteTask.objects.filter(suite_id=suite_id).order_by("position")]
        Suite.objects.filter(pk=suite_id, task_file_bytes=0).update(task_file_bytes=len("\n".join(lines).encode()))


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0002_suite_task_file_bytes"),
    ]

    operations = [
        migrations.RunPython(count_older_task_files, migrations.RunPython.noop),
    ]
