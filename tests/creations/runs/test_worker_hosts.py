"""What an operator relies on from each worker host: it says it is alive (and
whether its engine can start sandboxes), and a host that comes back cleans up
what it left behind — only its own."""

from __future__ import annotations

from typing import Any

import docker
import httpx
import pytest

from devstack.stack import AtelierServer
from sandboxes.docker_runtime import start_sandbox
from sandboxes.host_presence import alive_hosts
from tests.support.runs import wait_until

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

A_RUN_THAT_NEVER_WAS = "987654321"  # no such run: nobody will release its sandbox


def _exists(container_id: str) -> bool:
    try:
        docker.from_env().containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


def test_a_running_worker_says_its_host_can_start_sandboxes(run_stack: AtelierServer, sandbox_image: str) -> None:
    wait_until(
        lambda: any(host.host_id == run_stack.host_id and host.engine_ok for host in alive_hosts()),
        timeout=30,
        what="the worker's claim that its host is alive",
        logs=run_stack.logs,
    )
    response = httpx.get(f"http://localhost:{run_stack.port}/healthz/workers")
    assert response.status_code == 200
    assert response.json()["hosts_with_working_engine"] >= 1
    assert httpx.get(f"http://localhost:{run_stack.port}/healthz").json()["workers"]["ok"] is True


def test_a_worker_that_starts_again_removes_what_its_host_left_and_nothing_else(
    run_stack: AtelierServer, sandbox_image: str, settings: Any
) -> None:
    settings.SANDBOX_HOST_ID = run_stack.host_id
    # Names of this stack's own: a session stopped before its clean-up cannot keep the next one from starting.
    left_behind = start_sandbox(
        {"atelier.run_id": A_RUN_THAT_NEVER_WAS}, name=f"atelier-run-left-behind-{run_stack.host_id}"
    )
    settings.SANDBOX_HOST_ID = f"{run_stack.host_id}-elsewhere"
    another_hosts = start_sandbox(
        {"atelier.run_id": A_RUN_THAT_NEVER_WAS}, name=f"atelier-run-elsewhere-{run_stack.host_id}"
    )
    try:
        run_stack.kill_worker()  # as a host going down would
        run_stack.start_worker()  # and coming back
        wait_until(
            lambda: not _exists(left_behind.id),
            timeout=60,
            what="the restarted worker to remove its host's leftover sandbox",
            logs=run_stack.logs,
        )
        assert _exists(another_hosts.id)  # not its host's: not its business
    finally:
        left_behind.stop()
        another_hosts.stop()
