"""PostgreSQL for a stack: the address its processes connect to, and a database of a benchmark's own.

- `database_url()`: DATABASE_URL for the database this process is connected to (the tests' test
  database, a benchmark's throwaway one), for the stack's processes to use the same.
- `throwaway_database(suffix)`: a database made for one benchmark and dropped after it, this
  process connected to it meanwhile (a copy of the migrated template: `migrated_template`).
- `disconnect_others()`: end the other connections to this process's database, so it can be dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from devstack import Missing
from devstack.migrated_template import use_migrated_template

NEEDS_POSTGRESQL = "PostgreSQL: set DATABASE_URL (as `make pytest` and `make bench` do)"


def require_postgresql() -> None:
    """`Missing` unless this process's database is PostgreSQL (SQLite cannot serve other processes)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        raise Missing(NEEDS_POSTGRESQL)


def database_url() -> str:
    """DATABASE_URL of the database this process is connected to now (PostgreSQL only)."""
    from django.db import connection

    require_postgresql()
    db = connection.settings_dict
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def disconnect_others() -> None:
    """End every other connection to this process's database: those of processes that are gone
    but not yet noticed by the server, and of this process's other threads (Channels' sync-to-async
    pool, agent threads), which would keep the database from being dropped."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@contextmanager
def throwaway_database(suffix: str) -> Iterator[None]:
    """A database named after DATABASE_URL's plus `suffix`, with the project's tables (made afresh
    if one was left behind), this process's connection pointing at it for the block; dropped after."""
    from django.conf import settings
    from django.db import connection

    require_postgresql()
    name = f"{settings.DATABASES['default']['NAME']}{suffix}"
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = name
    use_migrated_template()
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield
    finally:
        disconnect_others()
        connection.creation.destroy_test_db(name, verbosity=0)
