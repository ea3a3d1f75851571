"""Test database benchmark: what making a process's test database costs.

    DATABASE_URL=postgres://... .venv/bin/python bench/test_database.py [--rounds 5]

Every pytest process (each xdist worker of `make test-fast` and `make test`, and `make test`'s
other phases) and every benchmark with a database of its own makes one. Measured per database, as
pytest-django makes it (`create_test_db`, which runs `migrate`), then dropped: the wall time, and
the CPU time of the whole machine (this process and PostgreSQL's).

Now: copied from the migrated template (`devstack.migrated_template`), where `migrate` finds nothing
to apply. Baseline, in the same run, rounds alternating: migrated from nothing, as before. Writes
bench/results/test_database.json.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from bench.measuring import (  # noqa: E402
    machine_speed,
    medians_of_wall_and_cpu,
    report_opening,
    wall_and_machine_cpu,
    write_results,
)
from devstack.databases import require_postgresql  # noqa: E402
from devstack.migrated_template import use_migrated_template  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "test_database.json"
BENCH_DB_SUFFIX = "_bench_test_database"


def one_database(*, from_template: bool) -> tuple[float, float]:
    """(wall seconds, machine CPU seconds) to make the test database; it is dropped after."""
    test_settings = connection.settings_dict["TEST"]
    test_settings.pop("TEMPLATE", None)
    original = connection.settings_dict["NAME"]
    test_settings["NAME"] = f"{original}{BENCH_DB_SUFFIX}"

    def make() -> None:
        if from_template:
            use_migrated_template()
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)

    measured = wall_and_machine_cpu(make)
    connection.creation.destroy_test_db(original, verbosity=0)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    require_postgresql()
    report = report_opening()
    use_migrated_template()  # built before the rounds, as the first process of a test run builds it
    now: list[tuple[float, float]] = []
    before: list[tuple[float, float]] = []
    for _ in range(args.rounds):
        before.append(one_database(from_template=False))
        now.append(one_database(from_template=True))
    report["baseline_migrated_from_nothing"] = medians_of_wall_and_cpu(before)
    report["now_copied_from_the_template"] = medians_of_wall_and_cpu(now)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
