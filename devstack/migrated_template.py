"""A PostgreSQL database with every migration applied, kept as a template: a test database (or a
benchmark's) is made as a copy of it, which the server does in a fraction of a second, instead of
running every migration again (about 6.5 CPU-seconds, which each pytest process of `make test` and
each benchmark would pay).

- `use_migrated_template()`: this process's test database is to be created from the template
  (Django's `TEST["TEMPLATE"]`), which is built first when none exists for the current migrations.
  Django still runs `migrate` on the copy, which finds nothing left to apply.

The template is named after a hash of every installed app's migration files (and Django's version),
so a new or changed migration makes and uses a new one; templates of other hashes are dropped when
one is built. However many processes ask at once, it is built once: under an advisory lock, in a
database of another name that is renamed when complete, so a process that finds the template by
its name finds it whole.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path
from typing import Any

from psycopg.errors import ObjectInUse

TEMPLATE_PREFIX = "atelier_migrated_"
# Any constant of our own: the advisory lock that serializes building the template, server-wide.
BUILD_LOCK = 0x41_54_4C_54  # "ATLT"


def template_name() -> str:
    """The template's name for the migrations on disk now."""
    import django
    from django.apps import apps
    from django.db.migrations.loader import MigrationLoader

    digest = hashlib.sha256(django.get_version().encode())
    for app in sorted(apps.get_app_configs(), key=lambda config: config.label):
        module_name, _ = MigrationLoader.migrations_module(app.label)
        if module_name is None:
            continue
        try:
            module = import_module(module_name)
        except ModuleNotFoundError:
            continue  # an app without migrations
        if module.__file__ is None:
            continue
        for path in sorted(Path(module.__file__).parent.glob("*.py")):
            digest.update(f"{app.label}/{path.name}\0".encode() + hashlib.sha256(path.read_bytes()).digest())
    return f"{TEMPLATE_PREFIX}{digest.hexdigest()[:16]}"


@contextmanager
def _server(settings_dict: dict[str, Any]) -> Iterator[Any]:
    """A connection to the server's maintenance database, outside any transaction; no host or port
    means libpq's defaults, as for Django's own connections."""
    import psycopg

    with psycopg.connect(
        dbname="postgres",
        user=settings_dict["USER"],
        password=settings_dict["PASSWORD"],
        host=settings_dict["HOST"] or None,
        port=settings_dict["PORT"] or None,
        autocommit=True,
    ) as server:
        yield server


def _exists(server: Any, name: str) -> bool:
    return server.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def _migrated_copy(name: str) -> None:
    """Database `name`, made and migrated by Django as a test database is; this process's connection
    settings are left as they were."""
    from django.conf import settings
    from django.db import connection

    settings_dict = connection.settings_dict
    original_name, test_settings = settings_dict["NAME"], settings_dict["TEST"]
    saved_test_settings = dict(test_settings)
    test_settings.pop("TEMPLATE", None)
    test_settings["NAME"] = name
    try:
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    finally:
        connection.close()
        settings.DATABASES[connection.alias]["NAME"] = original_name
        settings_dict["NAME"] = original_name
        test_settings.clear()
        test_settings.update(saved_test_settings)


def _build(server: Any, name: str) -> None:
    building = f"{name}_building"
    _migrated_copy(building)
    server.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
    others = server.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE %s AND datname <> %s", [f"{TEMPLATE_PREFIX}%", name]
    ).fetchall()
    for (other,) in others:
        with contextlib.suppress(ObjectInUse):  # one being copied right now goes with the next build
            server.execute(f'DROP DATABASE IF EXISTS "{other}"')


def use_migrated_template() -> None:
    """Create this process's test database as a copy of the migrated template (built if missing).
    Only for PostgreSQL; elsewhere the test database is migrated as usual."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    name = template_name()
    with _server(connection.settings_dict) as server:
        server.execute("SELECT pg_advisory_lock(%s)", [BUILD_LOCK])
        try:
            if not _exists(server, name):
                _build(server, name)
        finally:
            server.execute("SELECT pg_advisory_unlock(%s)", [BUILD_LOCK])
    connection.settings_dict["TEST"]["TEMPLATE"] = name
