"""The rest of `make test` runs two at a time with `--dist loadgroup`: the tests sharing a slow or
host-wide fixture (`xdist_group`, tests/support/markers.py) must land on one worker, which builds the
fixture once and never has two of them changing the host's firewall at once. The grouping is
pytest-xdist's, and depends on the pytest version: this checks it still holds with the pinned pair."""

import os
from pathlib import Path

from tests.support.inner_pytest import run_pytest_in

GROUPED = """
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("shared")


@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    (Path(__file__).parent / f"ran-{n}").write_text(os.environ["PYTEST_XDIST_WORKER"])
"""


def test_tests_of_one_group_all_run_on_the_same_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "DJANGO_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # xdist alone (the other plugins only slow the start).
    done = run_pytest_in(tmp_path, ["-p", "xdist.plugin", "-n", "2", "--dist", "loadgroup"], env)
    workers = [path.read_text() for path in tmp_path.glob("ran-*")]
    assert len(workers) == 6, done.stdout
    assert len(set(workers)) == 1, f"one group ran on {sorted(set(workers))}"
