"""A transactional test's teardown that loses a deadlock to the stack's processes tries again; any other
failure is reported at once."""

from __future__ import annotations

import psycopg.errors
import pytest
from django.core.management.base import CommandError

from tests.support.flush_retry import ATTEMPTS, retrying_deadlocks


class Teardown:
    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self, test_case: object) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)


def lost_deadlock() -> CommandError:
    # As Django's flush command reports it: its own error, caused by the database's.
    try:
        try:
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        except psycopg.errors.DeadlockDetected as error:
            raise CommandError("Database test_atelier couldn't be flushed.") from error
    except CommandError as error:
        return error


def test_a_lost_deadlock_is_tried_again_until_the_tables_are_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tests.support.flush_retry.PAUSE_S", 0)
    teardown = Teardown([lost_deadlock(), lost_deadlock()])
    retrying_deadlocks(teardown)(object())
    assert teardown.calls == 3


def test_a_deadlock_every_time_is_reported_after_the_last_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tests.support.flush_retry.PAUSE_S", 0)
    teardown = Teardown([lost_deadlock() for _ in range(ATTEMPTS)])
    with pytest.raises(CommandError):
        retrying_deadlocks(teardown)(object())
    assert teardown.calls == ATTEMPTS


def test_any_other_failure_is_reported_at_once() -> None:
    teardown = Teardown([CommandError("The database is not running.")])
    with pytest.raises(CommandError, match="not running"):
        retrying_deadlocks(teardown)(object())
    assert teardown.calls == 1
