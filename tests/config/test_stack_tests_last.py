"""Once a session has started its stack, the stack's worker claims any queued run committed to the test
database, so the tests that use a stack run after all the others (tests/support/fixtures/runs.py): a test
that commits runs to claim them itself never races it, whatever order the files were named in."""

import os
from pathlib import Path

from tests.support.inner_pytest import run_pytest_in

# Named so that the stack's test would come first by name and by file.
STACK_FIRST = """
import pytest


@pytest.fixture
def start_stack():
    return None  # the name is what marks a test `stack`; nothing is started here


def test_a_uses_a_stack(start_stack):
    pass


@pytest.mark.django_db(transaction=True)
def test_b_commits_runs_to_claim():
    pass


def test_c_needs_no_database():
    pass
"""

OTHER_FILE = """
import pytest


@pytest.mark.django_db
def test_d_in_a_later_file():
    pass
"""

ROOT = Path(__file__).resolve().parents[2]


def test_the_tests_that_use_a_stack_run_after_all_the_others(tmp_path: Path) -> None:
    (tmp_path / "test_a_stack_first.py").write_text(STACK_FIRST)
    (tmp_path / "test_z_other.py").write_text(OTHER_FILE)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.support.markers", "tests.support.fixtures.runs"]\n')
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    # The project's packages importable, and Django's settings for pytest-django, whose order is kept.
    env.update(PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="config.test_settings")
    done = run_pytest_in(tmp_path, ["--collect-only", "-q"], env)
    order = [line.split("::")[-1] for line in done.stdout.splitlines() if "::" in line]
    # pytest-django's order is kept among the rest (a database test, a committing one, one without);
    # the stack's test comes last.
    assert order == [
        "test_d_in_a_later_file",
        "test_b_commits_runs_to_claim",
        "test_c_needs_no_database",
        "test_a_uses_a_stack",
    ], done.stdout
