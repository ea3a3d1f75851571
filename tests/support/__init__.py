"""Everything the tests share, in one place (what they start comes from devstack/, outside tests/).

- `factories`: factory-boy factories for every model (the one way to build one) and `make_run`.
- `fixtures/`: pytest plugins (registered in tests/conftest.py), thin wrappers over devstack's
  launchers: `accounts` (the team: owner, member, viewer, outsider), `model` (devstack's scripted
  model server), `sandbox` (the image, a real gVisor sandbox), `runs` (a real Celery worker, beat and
  daphne: `run_stack`), `browser` (headless Chromium against that stack), `redis`, `s3`,
  `docker_engine`, `workers` (under pytest-xdist, a Redis of each worker's own).
- `markers`: the `docker`, `stack` and `browser` markers, applied from the fixtures a test uses
  (`make test-fast` runs the tests that have none of them).
- `runs`: submitting a run and waiting for it; `wsclient`: watching a run's websocket.
- `artifacts`: finished runs with real files; `media_samples`: small real media and hostile files.
- `agent`, `fakes`, `sandboxes`, `cgroups`: helpers for the agent loop and sandbox tests (`cgroups`: a
  parent cgroup of a test's own, where a sandbox's process sits).
- `urlconf`: every route of the project's URLconfs (HTTP and websocket), found by walking them.
- below: skipping (never in CI) when a dependency is missing, free ports, executables.
"""

import os
import shutil
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import NoReturn, TypeVar

import pytest

from devstack import Missing
from devstack.ports import free_port as free_port  # the tests' way to these two, defined once in devstack
from devstack.ports import port_open as port_open

Launched = TypeVar("Launched")

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def missing(reason: str) -> NoReturn:
    """Skip a test whose real dependency is absent — except in CI, where a
    skipped Docker/gVisor/Redis/Postgres/browser test would hide a broken feature."""
    if IN_CI:
        pytest.fail(f"required for this test but missing in CI: {reason}", pytrace=False)
    pytest.skip(reason)  # only outside CI: with CI=true the line above fails the test instead


def require(condition: bool, reason: str) -> None:
    if not condition:
        missing(reason)


def has_executable(name: str) -> bool:
    return shutil.which(name) is not None


@contextmanager
def started_or_skipped(launcher: AbstractContextManager[Launched]) -> Iterator[Launched]:
    """`with launcher as running`, for a fixture: a devstack launcher that finds something missing
    on this machine as it starts (`Missing`) skips the test (fails it in CI), as `require` does."""
    with ExitStack() as stack:
        try:
            running = stack.enter_context(launcher)
        except Missing as absent:
            missing(str(absent))
        yield running
