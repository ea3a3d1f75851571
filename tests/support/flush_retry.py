"""A transactional test's teardown empties every table with one TRUNCATE. The stack's processes (a Celery
worker ending a run, its notifications) may still be writing to the same database then: PostgreSQL
breaks the resulting lock cycle by failing one side, and when that is the TRUNCATE the next test starts
on the last one's rows. The TRUNCATE is one transaction, so trying it again is safe; by then the other
side has committed or rolled back."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import psycopg.errors
from django.core.management import call_command
from django.test import TransactionTestCase

ATTEMPTS = 5
PAUSE_S = 0.2


def _is_deadlock(error: BaseException) -> bool:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, psycopg.errors.DeadlockDetected):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def retrying_deadlocks(teardown: Callable[[Any], None]) -> Callable[[Any], None]:
    @functools.wraps(teardown)
    def retried(test_case: Any) -> None:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                teardown(test_case)
                return
            except Exception as error:
                if attempt == ATTEMPTS or not _is_deadlock(error):
                    raise
                time.sleep(PAUSE_S)

    return retried


def flush_database() -> None:
    """Every table emptied, as a transactional test's teardown does (for data a module commits itself)."""

    def flush(_: object) -> None:
        call_command("flush", interactive=False, verbosity=0, reset_sequences=False)

    retrying_deadlocks(flush)(None)


# Django's own teardown step (TransactionTestCase), which empties the tables; its stubs do not declare it.
TEARDOWN = "_fixture_teardown"


def install() -> None:
    setattr(TransactionTestCase, TEARDOWN, retrying_deadlocks(getattr(TransactionTestCase, TEARDOWN)))
