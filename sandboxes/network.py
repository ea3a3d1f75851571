"""The sandboxes' network and its egress policy.

Mode `internet`: sandboxes join a dedicated bridge (inter-container traffic
off). iptables then allows the public internet and refuses the rest:
- forwarded traffic (chain DOCKER-USER -> ATELIER-SANDBOX-FWD): established
  replies and DNS to the configured resolvers pass; the cloud metadata
  address, private, shared, link-local and multicast ranges are rejected;
- traffic to the host itself (chain INPUT -> ATELIER-SANDBOX-IN): only
  replies pass. DOCKER-USER never sees it, and `--internal` networks still
  reach the host's addresses, so this chain is what protects the platform's
  own services (database, Redis, the web app) on the host.
Mode `none`: no network interface but loopback.

The chains are flushed and refilled on every apply, so applying is idempotent.
"""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors
from docker.models.networks import Network

FORWARD_CHAIN = "ATELIER-SANDBOX-FWD"
INPUT_CHAIN = "ATELIER-SANDBOX-IN"
BLOCKED_RANGES = (
    "169.254.0.0/16",  # link-local, including the cloud metadata address 169.254.169.254
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",  # carrier-grade NAT, used by some clouds internally
    "127.0.0.0/8",
    "0.0.0.0/8",
    "224.0.0.0/4",
    "240.0.0.0/4",
)


class NetworkPolicyError(RuntimeError):
    """The network or its egress policy could not be set up; the message says how to fix it."""


@dataclass(frozen=True)
class NetworkSettings:
    name: str
    bridge: str
    subnet: str
    dns: tuple[str, ...]


def host_resolvers(resolv_conf: Path = Path("/etc/resolv.conf")) -> list[str]:
    """IPv4 nameservers of the host (Docker's embedded DNS forwards to them)."""
    servers: list[str] = []
    try:
        lines = resolv_conf.read_text().splitlines()
    except OSError:
        return servers
    for line in lines:
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "nameserver":
            try:
                if ipaddress.ip_address(fields[1]).version == 4:
                    servers.append(fields[1])
            except ValueError:
                continue
    return servers


def ensure_network(client: docker.DockerClient, net: NetworkSettings) -> Network:
    try:
        return client.networks.get(net.name)
    except docker.errors.NotFound:
        pass
    ipam = None
    if net.subnet:
        ipam = docker.types.IPAMConfig(pool_configs=[docker.types.IPAMPool(subnet=net.subnet)])
    try:
        return client.networks.create(
            net.name,
            driver="bridge",
            ipam=ipam,
            labels={"atelier.sandbox-network": "1"},
            options={
                "com.docker.network.bridge.name": net.bridge,
                "com.docker.network.bridge.enable_icc": "false",
                "com.docker.network.bridge.enable_ip_masquerade": "true",
            },
        )
    except docker.errors.APIError as exc:
        if "already exists" in str(exc):
            return client.networks.get(net.name)
        raise NetworkPolicyError(f"cannot create the sandbox network {net.name!r}: {exc}") from exc


def _iptables(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["iptables", "-w", "5", *args], capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise NetworkPolicyError(f"iptables {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


def _ensure_chain(chain: str) -> None:
    if _iptables("-n", "-L", chain, check=False).returncode != 0:
        _iptables("-N", chain)
    _iptables("-F", chain)


def _ensure_jump(parent: str, bridge: str, chain: str) -> None:
    rule = ("-i", bridge, "-j", chain)
    if _iptables("-C", parent, *rule, check=False).returncode != 0:
        _iptables("-I", parent, "1", *rule)


def policy_rules(net: NetworkSettings, resolvers: list[str]) -> dict[str, list[list[str]]]:
    """The rules of both chains, in order (also shown by sandbox_doctor)."""
    forward: list[list[str]] = [["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"]]
    for server in resolvers:
        for proto in ("udp", "tcp"):
            forward.append(["-d", f"{server}/32", "-p", proto, "--dport", "53", "-j", "RETURN"])
    for cidr in BLOCKED_RANGES:
        forward.append(["-d", cidr, "-j", "REJECT", "--reject-with", "icmp-admin-prohibited"])
    forward.append(["-j", "RETURN"])
    inbound: list[list[str]] = [["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"]]
    for server in resolvers:  # a resolver on the host itself (rare; e.g. a local cache)
        for proto in ("udp", "tcp"):
            inbound.append(["-d", f"{server}/32", "-p", proto, "--dport", "53", "-j", "ACCEPT"])
    inbound.append(["-j", "REJECT", "--reject-with", "icmp-admin-prohibited"])
    return {FORWARD_CHAIN: forward, INPUT_CHAIN: inbound}


def apply_egress_policy(net: NetworkSettings) -> None:
    """Install the policy for the sandbox bridge (needs root on the Docker host)."""
    if shutil.which("iptables") is None:
        raise NetworkPolicyError("iptables is not installed on the Docker host (apt-get install iptables).")
    resolvers = list(net.dns) or host_resolvers()
    rules = policy_rules(net, resolvers)
    for chain, chain_rules in rules.items():
        _ensure_chain(chain)
        for rule in chain_rules:
            _iptables("-A", chain, *rule)
    if _iptables("-n", "-L", "DOCKER-USER", check=False).returncode != 0:
        _iptables("-N", "DOCKER-USER")
        _iptables("-I", "FORWARD", "1", "-j", "DOCKER-USER")
    _ensure_jump("DOCKER-USER", net.bridge, FORWARD_CHAIN)
    _ensure_jump("INPUT", net.bridge, INPUT_CHAIN)


def egress_policy_problems(net: NetworkSettings) -> list[str]:
    """What is missing from the installed policy (empty when it is in place)."""
    problems = []
    if shutil.which("iptables") is None:
        return ["iptables is not installed"]
    for parent, chain in (("DOCKER-USER", FORWARD_CHAIN), ("INPUT", INPUT_CHAIN)):
        if _iptables("-C", parent, "-i", net.bridge, "-j", chain, check=False).returncode != 0:
            problems.append(f"no jump from {parent} to {chain} for bridge {net.bridge}")
        listing = _iptables("-S", chain, check=False).stdout
        if "REJECT" not in listing:
            problems.append(f"chain {chain} has no REJECT rules")
    return problems
