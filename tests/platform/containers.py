"""Starting a compose service's container from its definition, as `docker compose up` would.

The service keeps its image, command, user, environment, mounts of host paths, lock-down and
health check (Docker runs it; only its timing is shortened), interpolated as compose does.
What a test machine needs instead:
the PostgreSQL and Redis of the tests (on loopback, so the container shares this machine's network
or publishes a port on loopback) in place of the stack's own.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Mapping
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container

from tests.platform.compose_files import interpolate, service_environment

LABELS = {"atelier.owner": "tests", "atelier.tests": "platform"}


def run_service(
    client: docker.DockerClient,
    service: Mapping[str, Any],
    *,
    image: str,
    variables: Mapping[str, str],
    environment: Mapping[str, str] = {},
    command: list[str] | None = None,
    host_network: bool = True,
    publish: int | None = None,
) -> Container:
    kwargs: dict[str, Any] = {
        "image": image,
        "name": f"atelier-tests-{uuid.uuid4().hex[:10]}",
        "detach": True,
        "labels": LABELS,
        "environment": {**service_environment(service, variables), **environment},
    }
    if command is not None or service.get("command"):
        kwargs["command"] = command if command is not None else [interpolate(p, variables) for p in service["command"]]
    for key, option in (("user", "user"), ("read_only", "read_only"), ("cap_drop", "cap_drop")):
        if key in service:
            kwargs[option] = service[key]
    if "security_opt" in service:
        kwargs["security_opt"] = service["security_opt"]
    if "tmpfs" in service:
        kwargs["tmpfs"] = dict.fromkeys(service["tmpfs"], "")
    if service.get("pid") == "host":
        kwargs["pid_mode"] = "host"
    if service.get("cgroup"):
        kwargs["cgroupns"] = service["cgroup"]
    binds = [str(v) for v in service.get("volumes", []) if str(v).startswith("/")]  # host paths, not volumes
    if binds:
        kwargs["volumes"] = binds
    if host_network:
        kwargs["network_mode"] = "host"
    elif service.get("hostname"):
        kwargs["hostname"] = interpolate(service["hostname"], variables)
    if publish is not None:
        kwargs["ports"] = {f"{publish}/tcp": ("127.0.0.1", None)}
    if "healthcheck" in service:
        kwargs["healthcheck"] = {
            "test": [interpolate(part, variables) for part in service["healthcheck"]["test"]],
            "interval": 1_000_000_000,
            "timeout": 30_000_000_000,
            "retries": 120,
        }
    return client.containers.run(**kwargs)


def wait_healthy(container: Container, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        container.reload()
        if container.status == "exited":
            raise AssertionError(f"{container.name} exited:\n{logs(container)}")
        health = container.attrs["State"].get("Health") or {}
        if health.get("Status") == "healthy":
            return
        time.sleep(0.5)
    health = container.attrs["State"].get("Health") or {}
    raise AssertionError(f"{container.name} is not healthy: {health.get('Log', [])[-2:]}\n{logs(container)}")


def published_port(container: Container, port: int) -> int:
    container.reload()
    return int(container.attrs["NetworkSettings"]["Ports"][f"{port}/tcp"][0]["HostPort"])


def logs(container: Container) -> str:
    try:
        return str(container.logs(tail=60).decode(errors="replace"))
    except docker.errors.APIError:
        return "(no logs)"


def remove(container: Container) -> None:
    with contextlib.suppress(docker.errors.NotFound):
        container.remove(force=True)
