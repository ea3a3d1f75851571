"""Two worker hosts sharing one database, Redis and storage, each with its own
Docker + gVisor engine (the second a dockerd of its own on this machine, a
faithful stand-in for another host): runs spread over both, a cancel reaches
whichever host runs the run, and losing a host ends its runs with a reason that
names it while the other host's runs finish; when the lost host is back, its
janitor leaves no container behind, on either engine."""

from __future__ import annotations

from collections.abc import Iterator

import docker
import pytest
from django.test import Client

from creations.models import Artifact, Run, RunStatus
from creations.runs.reaper import worker_lost_reason
from devstack.containers import run_containers
from devstack.docker_engine import SecondEngine
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, submit, wait_for_event, wait_for_final, wait_until

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

HOST_B = "worker-host-b"
THREADS_PER_HOST = 2
# Each run stays at work until the test lets it go (a line into its sandbox's /tmp/go), not for a
# fixed time: on a busy machine the last sandbox may start long after the first, and a run that
# finished early would end neither by the cancel nor by its host going away.
WORK = (
    "mkdir -p /testbed/output && hostname > /testbed/output/where.txt && mkfifo /tmp/go && echo working && cat /tmp/go"
)


@pytest.fixture
def two_hosts(run_stack: AtelierServer, second_engine: SecondEngine, sandbox_image: str) -> Iterator[AtelierServer]:
    """The stack's worker (host A, the machine's engine) and a worker of host B on the
    second engine, two threads each: four runs at once, two a host."""
    with run_stack.worker_with_threads(THREADS_PER_HOST):
        run_stack.add_worker("worker-b", host_id=HOST_B, env=second_engine.sandbox_env(), threads=THREADS_PER_HOST)
        try:
            yield run_stack
        finally:
            run_stack.remove_worker("worker-b")


def _atelier_containers(client: docker.DockerClient) -> list[str]:
    return [c.name or "" for c in client.containers.list(all=True, filters={"label": "atelier.sandbox"})]


def _let_go(run: Run, client: docker.DockerClient) -> None:
    """End the run's waiting command: what it waits on (a named pipe) gets its line."""
    names = run_containers(run.pk, client=client)
    assert names, f"run {run.pk} has no sandbox on this engine"
    for name in names:
        result = client.containers.get(name).exec_run(["sh", "-c", "echo go > /tmp/go"], user="1000:1000")
        assert result.exit_code == 0, result.output


def test_runs_spread_over_two_hosts_and_survive_losing_one(
    two_hosts: AtelierServer, second_engine: SecondEngine, team: Team, scripted_model: ScriptedModel
) -> None:
    stack = two_hosts
    team.workspace.quota_concurrent_runs = 4
    team.workspace.save(update_fields=["quota_concurrent_runs"])
    endpoint = scripted_endpoint(team, scripted_model, [bash(WORK), submit_reply()])
    runs = [submit(team, endpoint, brief=f"run {n}") for n in range(4)]
    for run in runs:  # each is at work in its sandbox
        wait_for_event(run, "tool_output_delta", timeout=180, logs=stack.logs)
    by_host: dict[str, list[Run]] = {}
    for run in runs:
        run.refresh_from_db()
        by_host.setdefault(run.sandbox_host, []).append(run)
    assert set(by_host) == {stack.host_id, HOST_B}, stack.logs()
    on_b = by_host[HOST_B]
    assert len(on_b) == THREADS_PER_HOST
    # Host B's sandboxes run on host B's engine, and there only.
    engine_b = second_engine.client()
    for run in on_b:
        assert run_containers(run.pk, client=engine_b) != []
        assert run_containers(run.pk) == []

    # A cancel asked of the platform reaches the host that runs the run.
    cancelled, lost = on_b
    browser = Client()
    browser.force_login(team.member)
    assert browser.post(f"/runs/{cancelled.pk}/cancel/", HTTP_ACCEPT="application/json").status_code == 202
    cancelled = wait_for_final(cancelled, timeout=60, logs=stack.logs)
    assert cancelled.status == RunStatus.CANCELLED
    assert [a.path for a in Artifact.objects.filter(run=cancelled)] == ["where.txt"]
    wait_until(lambda: run_containers(cancelled.pk, client=engine_b) == [], timeout=30, what="the cancelled sandbox")

    # Host B goes down mid-run: its run ends, saying which host was lost, while host A's runs still
    # hold every thread of host A's worker (its reaper has a thread of its own); then host A's finish.
    stack.kill_worker("worker-b")
    lost = wait_for_final(lost, timeout=60, logs=stack.logs)
    assert (lost.status, lost.reason) == (RunStatus.FAILED, worker_lost_reason(HOST_B))
    on_a = by_host[stack.host_id]
    assert len(on_a) == THREADS_PER_HOST
    assert [Run.objects.get(pk=run.pk).status for run in on_a] == [RunStatus.RUNNING] * THREADS_PER_HOST
    engine_a = docker.from_env()
    for run in on_a:
        _let_go(run, engine_a)
    for run in by_host[stack.host_id]:
        run = wait_for_final(run, timeout=120, logs=stack.logs)
        assert run.status == RunStatus.SUCCEEDED, run.reason
        assert [a.path for a in Artifact.objects.filter(run=run)] == ["where.txt"]
    assert run_containers(lost.pk, client=engine_b) != []  # nobody else touches host B's engine

    # Host B is back: its janitor removes what it left; nothing of these runs is left anywhere.
    stack.start_worker("worker-b")
    wait_until(
        lambda: _atelier_containers(engine_b) == [], timeout=60, what="host B's janitor to clean up", logs=stack.logs
    )
    assert all(run_containers(run.pk) == [] for run in runs)
