"""Where the egress policy's iptables commands run: the Docker daemon's network namespace.

The sandboxes' bridge lives in the namespace of the Docker daemon, which is
not the worker's when the worker runs in a container (even with NET_ADMIN).
`policy_runner` finds out once per process and daemon, and runs the fixed
scripts of `sandboxes.network` either here or through a short-lived helper
container on the daemon's host network.
"""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import docker
import docker.errors

from sandboxes.per_process import per_process_by

logger = logging.getLogger(__name__)
HELPER_LABEL = "atelier.egress-helper"


class NetworkPolicyError(RuntimeError):
    """The network or its egress policy could not be set up; the message says how to fix it."""


class Runner(Protocol):
    where: str  # said by sandbox_doctor: which network namespace was checked

    def run(self, script: str) -> subprocess.CompletedProcess[str]: ...


class LocalRunner:
    """This process's network namespace (it is the Docker daemon's)."""

    def __init__(self, where: str = "") -> None:
        self.where = where or f"this process's network namespace ({_netns_id()})"

    def run(self, script: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, check=False)
        except subprocess.TimeoutExpired as exc:
            raise NetworkPolicyError(f"iptables did not answer within 60 s: {exc}") from exc


class DockerHostRunner:
    """The Docker daemon's network namespace, reached through the daemon itself.

    Why a helper container rather than `nsenter` from the worker: the worker
    already holds the Docker socket, and nothing else. nsenter would need the
    worker to see dockerd's pid (`pid: host`), CAP_SYS_ADMIN and an iptables in
    the worker image, and it cannot work with a daemon on another host or in
    another container (docker-in-docker). A container with `network_mode=host`
    is, by definition, in the namespace where that daemon creates its bridges.
    It runs under runc (gVisor has its own network stack) with only NET_ADMIN,
    NET_RAW and SYS_CHROOT, the host's root mounted read-only at /host (/run
    writable: legacy iptables' lock) and `chroot /host`: so it runs the HOST's
    own iptables, the same binary and backend (nft or legacy) as dockerd's,
    where an image's iptables could silently write to the other backend.
    (`--privileged` + `nsenter --target 1` was tried: privileged containers
    fail where the host's capability bounding set is reduced, and pid 1 is not
    always inspectable.) It only ever runs the fixed scripts of this module, is
    removed after each use and takes ~0.2 s, which the check's cache amortises.
    """

    def __init__(self, client: docker.DockerClient, image: str) -> None:
        self._client = client
        self._image = image
        self.where = "the Docker daemon's network namespace (through a helper container)"

    def run(self, script: str) -> subprocess.CompletedProcess[str]:
        try:
            container = self._client.containers.create(
                self._image,
                entrypoint=["chroot", "/host"],
                command=["sh", "-c", script],
                name=f"atelier-egress-helper-{secrets.token_hex(4)}",
                labels={HELPER_LABEL: "1"},
                user="0",
                runtime="runc",
                network_mode="host",
                cap_drop=["ALL"],
                cap_add=["NET_ADMIN", "NET_RAW", "SYS_CHROOT"],
                security_opt=["no-new-privileges"],
                read_only=True,
                volumes={"/": {"bind": "/host", "mode": "ro"}, "/run": {"bind": "/host/run", "mode": "rw"}},
                detach=True,
            )
        except docker.errors.APIError as exc:
            raise NetworkPolicyError(
                f"cannot create the egress helper container from {self._image}: {exc}. The worker is not in the "
                "Docker daemon's network namespace, so the policy is applied through it (see "
                "platform/sandbox/README.md, Egress)."
            ) from exc
        try:
            container.start()
            status = container.wait(timeout=60)
            out = container.logs(stdout=True, stderr=False).decode(errors="replace")
            err = container.logs(stdout=False, stderr=True).decode(errors="replace")
        except Exception as exc:
            raise NetworkPolicyError(f"the egress helper container failed: {exc}") from exc
        finally:
            try:
                container.remove(force=True)
            except docker.errors.APIError:
                logger.warning("could not remove the egress helper container %s", container.name)
        return subprocess.CompletedProcess(["sh", "-c", script], int(status.get("StatusCode", -1)), out, err)


_PROBE = "cat /proc/sys/kernel/random/boot_id; readlink /proc/self/ns/net"


def _netns_id() -> str:
    try:
        return os.readlink("/proc/self/ns/net")
    except OSError:
        return "net:[?]"


def _local_identity() -> tuple[str, str]:
    try:
        boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot_id = ""
    return boot_id, _netns_id()


def daemon_address(client: docker.DockerClient) -> str:
    """Which daemon a client talks to, as a key for per-daemon caches. docker-py's
    `base_url` is "http+docker://localhost" for every unix socket, so two engines on
    one machine would share an entry: the socket's path tells them apart."""
    socket_path = getattr(client.api.get_adapter(client.api.base_url), "socket_path", None)
    return f"unix://{socket_path}" if socket_path else str(client.api.base_url)


def _daemon_of(
    client: docker.DockerClient, image: str, *, identity: Callable[[], tuple[str, str]] = _local_identity
) -> str:
    return daemon_address(client)


@per_process_by(_daemon_of)
def policy_runner(
    client: docker.DockerClient, image: str, *, identity: Callable[[], tuple[str, str]] = _local_identity
) -> Runner:
    """How to run iptables in the Docker daemon's network namespace, decided once
    per process and daemon: a helper container on the daemon's host network
    reports its kernel (boot id) and namespace; when both are ours, iptables runs
    here directly (milliseconds), otherwise always through the helper.
    Namespace ids alone could coincide on two machines (the initial one has the
    same number everywhere), hence the boot id."""
    helper = DockerHostRunner(client, image)
    probe = helper.run(_PROBE)
    fields = probe.stdout.split()
    if probe.returncode != 0 or len(fields) != 2:
        raise NetworkPolicyError(
            f"cannot find the Docker daemon's network namespace (helper exit {probe.returncode}: "
            f"{probe.stderr.strip()[-300:]})"
        )
    boot_id, netns = identity()
    if (boot_id, netns) == (fields[0], fields[1]):
        return LocalRunner(f"this process's network namespace ({netns}), which is the Docker daemon's")
    helper.where = (
        f"the Docker daemon's network namespace ({fields[1]}) through a helper container; "
        f"this process is in {netns}" + ("" if boot_id == fields[0] else " on another kernel")
    )
    logger.info("egress policy: %s", helper.where)
    return helper
