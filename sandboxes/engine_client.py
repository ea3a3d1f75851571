"""Docker clients for this host's engine that do not ask it for its API version each time.

A client made by docker-py's `from_env()` first asks the engine which API version it speaks
(GET /version). The engine answers by starting `runc --version` and `docker-init --version`:
two processes on the host, and a round trip before the client's first real request. A worker
makes a client for every sandbox it starts, every health beat and every sweep. So the version
is asked once per process and engine (DOCKER_HOST), and later clients are made with it.

An engine keeps answering the API versions it answered, upgrades included (it drops only
versions far older than any it reported), so the one asked first stays good while the engine
stays. A failed ask keeps nothing: the next client asks again. An engine that stops answering
may come back older; whoever finds it so forgets the version (`forget_api_version`), and the
next client asks anew.
"""

from __future__ import annotations

import os

import docker

from sandboxes.per_process import per_process_by

VERSION_ASK_TIMEOUT_SECONDS = 15


def _engine_address() -> str:
    return os.environ.get("DOCKER_HOST", "")


@per_process_by(lambda address: address)
def _api_version(address: str) -> str:
    """The API version the engine at `address` speaks, as `from_env()` would negotiate it."""
    client = docker.from_env(timeout=VERSION_ASK_TIMEOUT_SECONDS)
    try:
        return str(client.api.api_version)
    finally:
        client.close()


def engine_client(*, timeout: int) -> docker.DockerClient:
    """A client of this host's engine (the environment's DOCKER_HOST, as `from_env()` reads it),
    at the API version it speaks. Raises docker.errors.DockerException while the engine does not
    answer and its version was never asked. The caller closes it."""
    return docker.from_env(timeout=timeout, version=_api_version(_engine_address()))


def forget_api_version() -> None:
    """Ask the engine its API version again with the next client (it did not answer this one)."""
    _api_version.forget(_engine_address())
