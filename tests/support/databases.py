"""A PostgreSQL database of a benchmark's own, made for one run and dropped after it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection


@contextmanager
def throwaway_database(suffix: str, *, needed_by: str) -> Iterator[None]:
    """Named after DATABASE_URL's database plus `suffix`; the process's connection points at it meanwhile."""
    if connection.vendor != "postgresql":
        sys.exit(f"{needed_by} needs PostgreSQL: set DATABASE_URL (as `make bench` does).")
    name = f"{settings.DATABASES['default']['NAME']}{suffix}"
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = name
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(name, verbosity=0)
