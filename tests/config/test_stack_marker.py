"""The stack is started only by tests marked `stack` (tests/support/markers.py): devstack cannot tell a
test from a benchmark, so the fixture that wraps it says no before anything starts."""

from pathlib import Path

import pytest

from tests.support.fixtures.runs import atelier_server_running


def test_a_test_not_marked_stack_that_starts_one_fails_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="not marked `stack`"), atelier_server_running(tmp_path):
        pass

    assert list(tmp_path.iterdir()) == []  # no Redis, no media folder, no logs
