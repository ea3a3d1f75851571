"""The garbage collector in a test process: what collection made, frozen; full passes, rare.

Collecting the suite leaves about half a million objects the collector tracks, which live as long
as the process: the items, their fixtures' definitions, the parametrized cases, the API schema the
contract tests are built from. With Python's default thresholds a full collection ran 17 to 19
times in each `make test-fast` worker, walking all of them and what the tests had kept since, at
0.2 to 0.3 s each; those runs took about 6% more of the machine's CPU than runs with the settings
below (more than the collections' own time: they probably also empty the processor's caches).

So what collection made is frozen (as the platform's own processes freeze what their start made,
config/startup_objects.py), and a full pass waits for a hundred times as many younger passes as
before. Young objects are still collected as often as ever: only cycles that outlive two young
passes wait longer, which raised a fast-test worker's peak memory by 50 to 130 MB.
"""

from __future__ import annotations

import gc

import pytest

from config.startup_objects import freeze_startup_objects

YOUNG_THRESHOLD = 700  # Python's default: allocations between two passes over the youngest objects
MIDDLE_THRESHOLD = 10  # Python's default
FULL_THRESHOLD = 1000  # Python's default is 10: middle passes between two full ones


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, FULL_THRESHOLD)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    freeze_startup_objects()
