"""Test databases are copies of one migrated template (devstack.migrated_template): built once however
many processes ask at the same moment, complete in every copy, and renamed when a migration changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from uuid import uuid4

import psycopg
import pytest

from devstack import migrated_template
from devstack.databases import database_url

ROOT = Path(__file__).resolve().parents[2]

# A process of its own, as each pytest worker is: its test database made from the template, then
# what that database holds (every migration on disk applied, the tables there), then dropped.
PROGRAM = """
import json, os, sys
import django
django.setup()
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from devstack import migrated_template
migrated_template.TEMPLATE_PREFIX = sys.argv[1]
connection.settings_dict["TEST"]["NAME"] = sys.argv[2]
migrated_template.use_migrated_template()
connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
applied = set(MigrationRecorder(connection).applied_migrations())
on_disk = set(MigrationLoader(connection).disk_migrations)
seen = {
    "template": connection.settings_dict["TEST"]["TEMPLATE"],
    "not_applied": sorted(f"{app}.{name}" for app, name in on_disk - applied),
    "tables": "creations_run" in connection.introspection.table_names(),
}
connection.creation.destroy_test_db(sys.argv[2], verbosity=0)
print(json.dumps(seen))
"""


def _maintenance() -> psycopg.Connection[Any]:
    """The test database's server, through its maintenance database."""
    return psycopg.connect(database_url().rsplit("/", 1)[0] + "/postgres", autocommit=True)


def _databases_named(prefix: str) -> list[str]:
    with _maintenance() as server:
        rows = server.execute("SELECT datname FROM pg_database WHERE starts_with(datname, %s)", [prefix]).fetchall()
    return sorted(name for (name,) in rows)


@pytest.mark.django_db
def test_two_processes_at_once_get_complete_copies_of_one_template() -> None:
    # A prefix of this test's own (not the suite's: a build drops the templates of its prefix it
    # does not need, and the suite's must not be touched).
    prefix = f"atelier_template_test_{uuid4().hex[:8]}_"
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "config.test_settings"}
    try:
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", PROGRAM, prefix, f"{prefix}copy_{n}"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(2)
        ]
        results = [process.communicate(timeout=120) for process in processes]
        for process, (_, stderr) in zip(processes, results, strict=True):
            assert process.returncode == 0, stderr[-3000:]
        seen = [json.loads(stdout.strip().splitlines()[-1]) for stdout, _ in results]
        (template,) = {s["template"] for s in seen}
        assert template.startswith(prefix)
        assert all(s["not_applied"] == [] and s["tables"] for s in seen), seen
        # One template, whole: no half-built one left, and both copies dropped.
        assert _databases_named(prefix) == [template]
    finally:
        with _maintenance() as server:
            for name in _databases_named(prefix):
                server.execute(f'DROP DATABASE IF EXISTS "{name}"')


def test_a_changed_migration_gets_a_template_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    name = migrated_template.template_name()
    assert name == migrated_template.template_name()
    read_bytes = Path.read_bytes

    def one_migration_changed(path: Path) -> bytes:
        data = read_bytes(path)
        return data + b"\n# changed\n" if path.name == "0001_initial.py" and "creations" in path.parts else data

    monkeypatch.setattr(Path, "read_bytes", one_migration_changed)
    assert migrated_template.template_name() not in {name, ""}
