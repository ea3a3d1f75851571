"""A second Docker + gVisor engine on this machine: the stand-in for a second worker host.

- `second_docker_engine(root, sandbox_image)`: a dockerd of its own (socket,
  exec root, default bridge and address range of its own; the first engine's
  gVisor runtime), with the sandbox image, until the block ends. Its
  `SecondEngine`: `.docker_host`, `.client()`, and `.sandbox_env()`: what a
  worker process needs to use it as its engine (DOCKER_HOST, and a sandbox
  network whose name, bridge and subnet differ from the first engine's, so that
  the two networks and their firewall chains never meet on this one kernel).

Why dockerd runs with `--iptables=false`: both engines share this kernel's
tables, and a dockerd starting with iptables on empties the DOCKER and
DOCKER-ISOLATION-STAGE-* chains (tried: the other engine's published ports and
network isolation were gone). So the launcher does for the sandbox bridge what
dockerd does on a host of its own (forwarding out, replies in, no traffic
between containers, masquerading), in chains of its own that FORWARD reaches
only after DOCKER-USER, where the platform's egress policy decides first.
(With iptables on, in a network namespace of its own where it cannot touch the
first engine's chains, the tests that use this engine pass as well.)

Why the data root is kept between sessions: `docker save | docker load` of the
sandbox image takes ~37 s here (save ~15 s, then dockerd registers the layers
~20 s, one after the other). The next session finds the image there and starts
in about a second. One session at a time uses the kept data root (a lock); one
that finds it taken uses a data root of its own and pays the load.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors

from devstack import Missing
from devstack.processes import require_executable
from sandboxes.firewall import daemon_address
from sandboxes.network import NetworkSettings

# Each session takes a free /24 of this block: its dockerd's bridge, the sandbox network
# and a pool for any other network made on the engine. The first engine picks from
# 172.17-31/16 and 192.168/16 (Docker's defaults); the sandbox tests' own links use 10.213.
ADDRESS_BLOCK = ipaddress.IPv4Network("10.214.0.0/16")
KEPT_ROOT = Path(tempfile.gettempdir()) / f"atelier-second-engine-{os.getuid()}"
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
BUILT_IN_RUNTIMES = {"runc", "io.containerd.runc.v2", "io.containerd.runtime.v1.linux"}
DEFAULT_NETWORKS = {"bridge", "host", "none"}


@dataclass
class SecondEngine:
    first_docker_host: str  # the engine every other test uses
    root: Path  # socket, exec root, daemon.json and log, removed at the end
    data_root: Path
    docker_host: str
    bridge: str  # dockerd's default bridge, made by the launcher
    network: NetworkSettings  # the sandbox network of a worker on this engine
    forward_chain: str  # the launcher's stand-in for dockerd's own rules
    timings: dict[str, float] = field(default_factory=dict)  # seconds: "dockerd", "image"
    process: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.root / "dockerd.log"

    def client(self, timeout: int = 120) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.docker_host, timeout=timeout)

    def first_client(self) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.first_docker_host, timeout=120)

    def sandbox_env(self) -> dict[str, str]:
        """The environment a worker process needs to use this engine as its own."""
        return {
            "DOCKER_HOST": self.docker_host,
            "SANDBOX_NETWORK_NAME": self.network.name,
            "SANDBOX_NETWORK_BRIDGE": self.network.bridge,
            "SANDBOX_NETWORK_SUBNET": self.network.subnet,
        }

    def container_ids(self) -> set[str]:
        return _container_ids(self.client())

    def first_container_ids(self) -> set[str]:
        return _container_ids(self.first_client())


def _container_ids(client: docker.DockerClient) -> set[str]:
    """Every container's id, from the listing alone: docker-py's containers.list() also inspects
    each one, which waits for any container busy elsewhere (say, another suite's, being killed)."""
    return {str(container["Id"]) for container in client.api.containers(all=True)}


def _run(*argv: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(argv)}` failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def _taken_networks(first: docker.DockerClient) -> list[ipaddress.IPv4Network]:
    """Every IPv4 range in use here: routes (all tables), addresses, the first engine's networks."""
    from django.conf import settings

    routes = json.loads(_run("ip", "-j", "-4", "route", "show", "table", "all").stdout)
    prefixes = [str(route.get("dst", "")) for route in routes]
    for link in json.loads(_run("ip", "-j", "-4", "addr").stdout):
        prefixes += [f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])]
    for docker_network in first.networks.list():
        configs = (docker_network.attrs.get("IPAM") or {}).get("Config") or []
        prefixes += [config.get("Subnet", "") for config in configs]
    prefixes.append(settings.SANDBOX_NETWORK_SUBNET)
    taken: list[ipaddress.IPv4Network] = []
    for prefix in prefixes:
        with contextlib.suppress(ValueError):  # "default", empty, IPv6
            network = ipaddress.ip_network(prefix, strict=False)
            if isinstance(network, ipaddress.IPv4Network) and network.prefixlen > 0:
                taken.append(network)
    return taken


def _free_block(first: docker.DockerClient) -> ipaddress.IPv4Network:
    taken = _taken_networks(first)
    blocks = list(ADDRESS_BLOCK.subnets(new_prefix=24))
    random.shuffle(blocks)  # two sessions at once rarely try the same one
    for block in blocks:
        if not any(block.overlaps(network) for network in taken):
            return block
    raise RuntimeError(f"no free /24 left in {ADDRESS_BLOCK} for the second engine")


@contextlib.contextmanager
def _data_home(private: Path) -> Iterator[Path]:
    """Where the data root (`data/`) and dockerd's pid file go: the kept directory when no
    other session (nor a dockerd left behind by a killed one) uses it, else `private`.
    dockerd itself refuses to start while the pid file names a live process."""
    KEPT_ROOT.mkdir(mode=0o700, exist_ok=True)
    with (KEPT_ROOT / "lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield private
            return
        pidfile = KEPT_ROOT / "docker.pid"
        if pidfile.exists() and Path(f"/proc/{pidfile.read_text().strip() or 0}").exists():
            yield private
            return
        yield KEPT_ROOT


def _daemon_config(first: docker.DockerClient, block: ipaddress.IPv4Network) -> dict[str, Any]:
    from django.conf import settings

    runtimes = {name: spec for name, spec in first.info().get("Runtimes", {}).items() if name not in BUILT_IN_RUNTIMES}
    if settings.SANDBOX_RUNTIME not in runtimes and settings.SANDBOX_RUNTIME != "runc":
        raise Missing(f"the sandbox runtime {settings.SANDBOX_RUNTIME} on the first engine")
    return {
        "runtimes": runtimes,  # as registered on the first engine: the same binary and arguments
        "iptables": False,  # see the module's docstring
        "default-address-pools": [{"base": str(list(block.subnets(new_prefix=25))[1]), "size": 28}],
    }


def _forwarding_rules(chain: str, net: NetworkSettings) -> str:
    """What dockerd (iptables on) adds for a bridge with enable_icc=false, as one iptables-restore input."""
    bridge = net.bridge
    return (
        f"*filter\n:{chain} - [0:0]\n"
        f"-A {chain} -o {bridge} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
        f"-A {chain} -i {bridge} ! -o {bridge} -j ACCEPT\n"
        f"-A {chain} -i {bridge} -o {bridge} -j DROP\n"
        f"-A FORWARD -j {chain}\nCOMMIT\n"
        f"*nat\n:{chain} - [0:0]\n-A {chain} -s {net.subnet} ! -o {bridge} -j MASQUERADE\n"
        f"-A POSTROUTING -j {chain}\nCOMMIT\n"
    )


def _remove_forwarding_rules(chain: str) -> None:
    for table, parent in (("filter", "FORWARD"), ("nat", "POSTROUTING")):
        while _run("iptables", "-w", "5", "-t", table, "-D", parent, "-j", chain, check=False).returncode == 0:
            pass
        _run("iptables", "-w", "5", "-t", table, "-F", chain, check=False)
        _run("iptables", "-w", "5", "-t", table, "-X", chain, check=False)


def _start_dockerd(engine: SecondEngine, pidfile: Path) -> subprocess.Popen[bytes]:
    argv = [
        "dockerd", "--config-file", str(engine.root / "daemon.json"), "--host", engine.docker_host,
        "--data-root", str(engine.data_root), "--exec-root", str(engine.root / "exec"),
        "--pidfile", str(pidfile), "--bridge", engine.bridge,
    ]  # fmt: skip
    with engine.log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        if process.poll() is not None:
            raise RuntimeError(
                f"the second dockerd exited ({process.returncode}; its data root, which may be removed to start "
                f"afresh: {engine.data_root}):\n{engine.log.read_text()[-2000:]}"
            )
        with contextlib.suppress(docker.errors.DockerException, OSError):
            engine.client(timeout=5).ping()
            return process
        if time.monotonic() > deadline:
            raise RuntimeError(f"the second dockerd did not answer in time:\n{engine.log.read_text()[-2000:]}")
        time.sleep(0.1)


def _clear(client: docker.DockerClient) -> None:
    """Every container and network on the engine: all of them belong to this launcher."""
    for container_id in _container_ids(client):
        with contextlib.suppress(docker.errors.NotFound):
            client.api.remove_container(container_id, force=True)
    for network in client.networks.list():
        if network.name not in DEFAULT_NETWORKS:
            with contextlib.suppress(docker.errors.NotFound):
                network.remove()


def _load_image(engine: SecondEngine, first: docker.DockerClient, tag: str) -> None:
    """The first engine's sandbox image, streamed over unless the second already has it; older ones go."""
    client = engine.client(timeout=600)
    wanted = first.images.get(tag).id
    for image in client.images.list():
        if image.id and image.id != wanted:
            client.images.remove(image.id, force=True)
    with contextlib.suppress(docker.errors.ImageNotFound):
        if client.images.get(tag).id == wanted:
            return
    first_host = {**os.environ, "DOCKER_HOST": engine.first_docker_host}
    save = subprocess.Popen(["docker", "save", tag], stdout=subprocess.PIPE, env=first_host)
    assert save.stdout is not None
    try:
        load = subprocess.run(
            ["docker", "load", "--quiet"], stdin=save.stdout, capture_output=True, text=True,
            env={**os.environ, "DOCKER_HOST": engine.docker_host}, check=False,
        )  # fmt: skip
    finally:
        save.stdout.close()
        save.wait()
    if save.returncode != 0 or load.returncode != 0:
        raise RuntimeError(f"loading {tag} into the second engine failed: {load.stderr.strip()[-1000:]}")


def _stop(engine: SecondEngine) -> None:
    from sandboxes.firewall import LocalRunner
    from sandboxes.network import remove_egress_policy

    process = engine.process
    try:
        if process is not None and process.poll() is None:
            with contextlib.suppress(docker.errors.DockerException, OSError):
                _clear(engine.client(timeout=60))
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    finally:
        for bridge in (engine.bridge, engine.network.bridge):  # the sandbox bridge is gone unless dockerd died
            _run("ip", "link", "del", bridge, check=False)
        remove_egress_policy(engine.network, LocalRunner())  # what the platform installed for the sandbox bridge
        _remove_forwarding_rules(engine.forward_chain)
        mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
        for mount in reversed(mounts):  # left only by a dockerd that had to be killed
            if mount.startswith(f"{engine.root}/"):
                _run("umount", "-l", mount, check=False)
        _run("rm", "-rf", "--one-file-system", str(engine.root), check=False)


@contextlib.contextmanager
def second_docker_engine(root: Path, sandbox_image: str) -> Iterator[SecondEngine]:
    """The second engine, its state in `root` (an empty directory), for as long as the block
    lasts (the tests' `second_engine` fixture, bench/hosts.py), then stopped: its containers and
    networks removed, dockerd ended, its bridges and firewall chains deleted, `root` removed.
    `Missing` unless this process is root and dockerd, docker, ip and iptables are installed."""
    if os.geteuid() != 0:
        raise Missing("root (a dockerd, a bridge and iptables rules of its own)")
    for tool in ("dockerd", "docker", "ip", "iptables", "iptables-restore"):
        require_executable(tool, "on the host")
    first = docker.from_env(timeout=600)
    root.mkdir(parents=True, exist_ok=True)
    tag = secrets.token_hex(3)  # names of 14 characters at most: Linux allows 15 for a bridge
    block = _free_block(first)
    bridge_net, sandbox_net = list(block.subnets(new_prefix=26))[:2]
    with _data_home(root) as home:
        engine = SecondEngine(
            first_docker_host=daemon_address(first),
            root=root,
            data_root=home / "data",
            docker_host=f"unix://{root / 'docker.sock'}",
            bridge=f"atl-e2-{tag}",
            network=NetworkSettings(
                name=f"atelier-e2-sandbox-{tag}", bridge=f"atl-e2s-{tag}", subnet=str(sandbox_net), dns=()
            ),
            forward_chain=f"ATL-E2-{tag}",
        )
        (root / "daemon.json").write_text(json.dumps(_daemon_config(first, block)))
        try:
            _run("ip", "link", "add", engine.bridge, "type", "bridge")
            _run("ip", "addr", "add", f"{bridge_net[1]}/{bridge_net.prefixlen}", "dev", engine.bridge)
            _run("ip", "link", "set", engine.bridge, "up")
            rules = _forwarding_rules(engine.forward_chain, engine.network)
            _run("iptables-restore", "-w", "5", "--noflush", stdin=rules)
            # A kept data root remembers the bridges of earlier sessions' engines; booting from that
            # state, dockerd took the first engine's docker0 away. Networks are made anew each time.
            shutil.rmtree(engine.data_root / "network", ignore_errors=True)
            started = time.monotonic()
            engine.process = _start_dockerd(engine, home / "docker.pid")
            engine.timings["dockerd"] = time.monotonic() - started
            _clear(engine.client())  # a kept data root may hold what a killed session left
            started = time.monotonic()
            _load_image(engine, first, sandbox_image)
            engine.timings["image"] = time.monotonic() - started
            yield engine
        finally:
            _stop(engine)
