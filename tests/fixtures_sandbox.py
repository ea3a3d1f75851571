"""Sandbox fixtures shared by every area (loaded from tests/conftest.py).

- `sandbox_image`: the sandbox image, built once (offline path) if missing.
- `sandbox_provider`: a cold-start provider whose sandboxes are labelled as tests'.
- `sandbox`: a fresh sandbox per test, removed afterwards.
- `shared_sandbox`: one sandbox per test module, for tests that only read or
  write their own files.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.support import has_executable, require

if TYPE_CHECKING:  # imported lazily below: these modules read Django settings
    from sandboxes.docker_runtime import DockerSandbox
    from sandboxes.pool import ColdStartProvider

TEST_LABELS = {"atelier.owner": "tests", "atelier.run_id": "tests"}


def _docker_ready() -> bool:
    if not has_executable("docker"):
        return False
    import docker

    try:
        docker.from_env(timeout=10).ping()
    except Exception:
        return False
    return True


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    require(_docker_ready(), "a running Docker engine")
    import docker

    from sandboxes.image import build_sandbox_image, sandbox_image_tag

    tag = sandbox_image_tag()
    try:
        docker.from_env().images.get(tag)
    except docker.errors.ImageNotFound:
        build_sandbox_image(offline=True, log=lambda _line: None)
    runtimes = docker.from_env().info().get("Runtimes", {})
    from django.conf import settings

    require(settings.SANDBOX_RUNTIME in runtimes, f"the Docker runtime {settings.SANDBOX_RUNTIME!r}")
    return tag


@pytest.fixture(scope="session")
def sandbox_provider(sandbox_image: str) -> ColdStartProvider:
    from sandboxes.pool import ColdStartProvider

    return ColdStartProvider()


@pytest.fixture
def sandbox(sandbox_provider: ColdStartProvider) -> Iterator[DockerSandbox]:
    from sandboxes.docker_runtime import DockerSandbox

    box = sandbox_provider.acquire(labels=TEST_LABELS)
    assert isinstance(box, DockerSandbox)
    yield box
    sandbox_provider.release(box)


@pytest.fixture(scope="module")
def shared_sandbox(sandbox_provider: ColdStartProvider) -> Iterator[DockerSandbox]:
    from sandboxes.docker_runtime import DockerSandbox

    box = sandbox_provider.acquire(labels=TEST_LABELS)
    assert isinstance(box, DockerSandbox)
    yield box
    sandbox_provider.release(box)
