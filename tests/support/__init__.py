"""Everything the tests share, in one place.

- `factories`: factory-boy factories for every model (the one way to build one) and `make_run`.
- `fixtures/`: pytest plugins (registered in tests/conftest.py): `accounts` (the team: owner,
  member, viewer, outsider), `model` (the scripted model server), `sandbox` (the image, a real
  gVisor sandbox), `runs` (a real Celery worker, beat and daphne: `run_stack`), `browser`
  (headless Chromium against that stack), `workers` (under pytest-xdist, a Redis of each worker's own).
- `markers`: the `docker`, `stack` and `browser` markers, applied from the fixtures a test uses
  (`make test-fast` runs the tests that have none of them).
- `scripted_model`: an OpenAI-compatible HTTP server that plays a script of replies.
- `runs`: submitting a run and waiting for it; `wsclient`: watching a run's websocket.
- `artifacts`: finished runs with real files; `media_samples`: small real media and hostile files.
- `agent`, `fakes`, `sandboxes`, `cgroups`: helpers for the agent loop and sandbox tests (`cgroups`: a
  parent cgroup of a test's own, where a sandbox's process sits).
- `urlconf`: every route of the project's URLconfs (HTTP and websocket), found by walking them.
- below: skipping (never in CI), free ports, executables.

bench/ imports from here only.
"""

import os
import shutil
import socket
from typing import NoReturn

import pytest

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


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def has_executable(name: str) -> bool:
    return shutil.which(name) is not None
