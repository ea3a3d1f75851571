"""A read the ORM builds once and the database runs many times, with other values each time.

A workspace's month of usage is one statement of a dozen scalar subqueries (creations.usage.
selectors). Building and compiling that through the ORM takes several milliseconds of CPU per
call, while PostgreSQL answers it in well under one. It is read by the dashboard, the API's
workspace operations, each run's budget watch and every submission's budget check.

The statement's text depends only on its shape (say, how many workspaces it reads), never on
the values. So the first call of each shape builds it with stand-in values and finds where
each stand-in went among the compiled statement's parameters; later calls put their own values
there and run the same text, one statement as before. The ORM's compiler is kept too, so rows
come back converted exactly as a queryset's would be.

Only on PostgreSQL, whose driver takes the values as they are; another database adapts some
values (SQLite stores times as text), so its statements are built afresh on each call. A
statement whose stand-ins are not all found among its parameters is built afresh on each call
too: never run with a value in the wrong place.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import QuerySet

# Statements kept per thread and per read: each holds its SQL and the ORM's compiled query.
KEPT_PER_THREAD = 32
# Values no caller passes: times in 1901 and large negative ids, each call's own.
_STAND_IN_EPOCH = datetime(1901, 1, 1, tzinfo=UTC)
_STAND_IN_FIRST_ID = -(10**15)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, str, int | None], ...]  # (parameter, value's name, index in a list value)
    compiler: Any  # the ORM's compiler of `sql`, for its converters

    def rows(self, values: dict[str, Any]) -> list[dict[str, Any]]:
        params = list(self.params)
        for position, name, index in self.slots:
            params[position] = values[name] if index is None else values[name][index]
        with self.compiler.connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            fetched = cursor.fetchall()
        query = self.compiler.query
        names = [*query.extra_select, *query.values_select, *query.annotation_select]
        return [dict(zip(names, row, strict=True)) for row in self.compiler.results_iter(results=[fetched])]


class ReusedStatement:
    """`build(**values)`, a `.values()` queryset, run as one statement per call, compiled once per
    thread and `shape` (what, beside the values, changes its text). Values may be datetimes, ints,
    and lists of ints (their length is part of the shape)."""

    def __init__(self, build: Callable[..., QuerySet[Any, Any]]) -> None:
        self._build = build
        self._compiled = threading.local()  # a connection is a thread's own, and so is its compiler

    def rows(self, *, shape: Hashable, **values: Any) -> list[dict[str, Any]]:
        compiled = self._compiled_for(shape, values)
        if compiled is None:
            return list(self._build(**values))
        return compiled.rows(values)

    def _compiled_for(self, shape: Hashable, values: dict[str, Any]) -> _Compiled | None:
        database = connections[DEFAULT_DB_ALIAS]
        if database.vendor != "postgresql":
            return None
        kept: dict[Hashable, _Compiled | None] = self._compiled.__dict__.setdefault("by_shape", {})
        # The connection's own id: settings that change the databases (tests) make new ones. Its
        # compiler holds it, so the id is not reused while it is kept.
        key = (id(database), shape, tuple((name, _length(value)) for name, value in sorted(values.items())))
        if key not in kept:
            # The shapes a thread meets are few (workspaces in one list: as many as one person is in),
            # but nothing bounds them: past KEPT_PER_THREAD the one kept longest goes.
            if len(kept) >= KEPT_PER_THREAD:
                del kept[next(iter(kept))]
            kept[key] = self._compile(values, database)
        return kept[key]

    def _compile(self, values: dict[str, Any], database: Any) -> _Compiled | None:
        numbers = itertools.count()
        stand_ins = {name: _stand_in(value, numbers) for name, value in values.items()}
        queryset = self._build(**stand_ins)
        compiler = queryset.query.get_compiler(connection=database)
        sql, params = compiler.as_sql()
        wanted: dict[Any, tuple[str, int | None]] = {}
        for name, stand_in in stand_ins.items():
            if isinstance(stand_in, list):
                wanted.update({item: (name, index) for index, item in enumerate(stand_in)})
            else:
                wanted[stand_in] = (name, None)
        slots = tuple(
            (position, *wanted[param]) for position, param in enumerate(params) if _hashable(param) and param in wanted
        )
        if {slot[1:] for slot in slots} != set(wanted.values()):
            return None
        return _Compiled(sql=sql, params=tuple(params), slots=slots, compiler=compiler)


def _stand_in(value: Any, numbers: Iterator[int]) -> Any:
    if isinstance(value, datetime):
        return _STAND_IN_EPOCH + timedelta(microseconds=next(numbers) + 1)
    if isinstance(value, int) and not isinstance(value, bool):
        return _STAND_IN_FIRST_ID - next(numbers)
    if isinstance(value, list) and all(isinstance(item, int) and not isinstance(item, bool) for item in value):
        return [_STAND_IN_FIRST_ID - next(numbers) for _ in value]
    raise TypeError(f"A reused statement takes datetimes, ints and lists of ints, not {type(value).__name__}")


def _length(value: Any) -> int | None:
    return len(value) if isinstance(value, list) else None


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
