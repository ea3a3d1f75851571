"""Tests sorted by what they start, from the fixtures they use (a pytest plugin, loaded from tests/conftest.py).

A test whose fixtures (pytest's transitive closure: `sandbox` builds on `sandbox_provider`, which
builds on `sandbox_image`) include one of `STARTED_BY` gets that marker at collection:

- `docker`: a Docker engine with gVisor (`sandbox_image`, and everything built on it: providers,
  sandboxes, the second engine; `platform_images`).
- `stack`: daphne, a Celery worker and beat as processes of their own (`start_stack`, and
  `atelier_server`, `run_stack`, `web` built on it).
- `browser`: headless Chromium (`browser`).

What is left needs PostgreSQL and Redis only: `make test-fast` runs it in parallel.

So that no test starts one of these unmarked, each test reaches them only as marked: a test not
marked `docker` that reaches the Docker engine fails, and so does one that starts a stack unmarked
or asks for one of these fixtures by name (`request.getfixturevalue`), which no marker can see.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, NoReturn

import docker.api.client
import pytest

# What a fixture starts: the marker of every test that uses it, directly or through another fixture.
STARTED_BY = {
    "sandbox_image": "docker",
    "platform_images": "docker",
    "start_stack": "stack",
    "browser": "browser",
}
# Session fixtures that are slow to start, or that no two sessions may build at once: under
# `pytest-xdist --dist loadgroup` (the rest of `make test`) every test using one runs in the same worker,
# which starts it once.
SHARED_BY = {
    # A dockerd (a second session pays ~40 s loading the image into it), with bridges, routes and
    # firewall rules of this machine: with the other tests that set those (`host-network` by hand).
    "second_engine": "host-network",
    "platform_images": "platform-images",  # the production images, built under one tag
}
HOW = {
    "docker": "ask for the `sandbox_image` fixture (or one built on it: `sandbox`, `sandbox_provider`, ...)",
    "stack": "ask for the `start_stack` fixture (or one built on it: `atelier_server`, `run_stack`, ...)",
    "browser": "ask for the `browser` fixture",
}

_running: pytest.Item | None = None  # the test being set up, run or torn down
# Addresses of stand-ins for the engine that a test serves itself (a socket in its own directory):
# clients of those are no Docker engine, and any test may make them.
STAND_IN_ENGINES: set[str] = set()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for marker in sorted({STARTED_BY[name] for name in used & STARTED_BY.keys()}):
            item.add_marker(marker)
        for group in sorted({SHARED_BY[name] for name in used & SHARED_BY.keys()}):
            item.add_marker(pytest.mark.xdist_group(group))


def is_marked(item: pytest.Item, marker: str) -> bool:
    return item.get_closest_marker(marker) is not None


def expect_marker(marker: str, what: str) -> None:
    """Fail the running test if it starts `what` without being marked `marker`; outside pytest
    (the benchmarks) a no-op."""
    if _running is not None and not is_marked(_running, marker):
        _unmarked(marker, what)


def _unmarked(marker: str, what: str) -> NoReturn:
    pytest.fail(
        f"this test starts {what} but is not marked `{marker}`, so `make test-fast` would run it: "
        f"{HOW[marker]} as a parameter of the test or of its fixtures (tests/support/markers.py)",
        pytrace=False,
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    global _running
    _running = item
    try:
        return (yield)
    finally:
        _running = None


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> None:
    marker = STARTED_BY.get(fixturedef.argname)
    if marker is not None and _running is not None and not is_marked(_running, marker):
        # Failed as pytest records a failed set-up, under a key no request has: the next test to ask
        # for it (marked) gets it set up afresh instead of this failure.
        fixturedef.cached_result = (None, object(), None)
        _unmarked(marker, f"`{fixturedef.argname}`")


@pytest.fixture(autouse=True)
def _docker_only_when_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any client of the Docker engine (docker-py's, under `docker.from_env()` and `DockerClient`)
    refuses to connect in a test not marked `docker`. Function-scoped: a module's or the session's
    sandboxes are released after this is undone."""
    if is_marked(request.node, "docker"):
        return

    connect = docker.api.client.APIClient.__init__

    def refuse_unless_a_stand_in(client: docker.api.client.APIClient, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("base_url") not in STAND_IN_ENGINES:
            _unmarked("docker", "a client of the Docker engine")
        connect(client, *args, **kwargs)

    monkeypatch.setattr(docker.api.client.APIClient, "__init__", refuse_unless_a_stand_in)
