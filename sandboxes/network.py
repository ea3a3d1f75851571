"""The sandboxes' network and its egress policy.

Mode `internet`: sandboxes join a dedicated bridge (inter-container traffic
off, no IPv6 addresses). iptables AND ip6tables then allow the public internet
and refuse the rest, with the same two chains per bridge in both families:
- forwarded traffic (chain DOCKER-USER -> ATELIER-FWD-<bridge>): established
  replies and DNS to the configured resolvers pass; cloud metadata addresses
  and the private, shared, loopback, link-local and multicast ranges are
  rejected;
- traffic to the host itself (chain INPUT -> ATELIER-IN-<bridge>): only
  replies pass. DOCKER-USER never sees it, and `--internal` networks still
  reach the host's addresses, so this chain is what protects the platform's
  own services (database, Redis, the web app) on the host.
Mode `none`: no network interface but loopback.

Why IPv6 is policed rather than only switched off: the network is created
without IPv6, yet a container still gets a link-local fe80:: address on the
bridge, and so does the host's end of it: without ip6tables rules a sandbox
reaches every service the host binds to `::` (most do) through fe80::. And
if IPv6 is ever enabled on the network (or by the daemon's defaults), the
same rules keep holding instead of an open second stack.

Where the rules live: in the network namespace of the Docker daemon, where
the bridge is. A worker that runs in a container (its own namespace, even
with NET_ADMIN) would otherwise fill its own, useless, tables. `sandboxes.firewall.policy_runner`
finds out once per process and, if the namespaces differ, runs the commands
through a short-lived helper container with the host's network (see there).

The policy is verified before every sandbox starts (`sandboxes.egress_guard`: one
`iptables-save` per family, cached a few seconds) and restored when it has
drifted: an `iptables -F` or a firewall reload no longer opens it silently.
Applying is one atomic `iptables-restore --noflush` per family, so there is
never a moment with an empty chain.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors
from docker.models.networks import Network

from sandboxes.firewall import NetworkPolicyError, Runner

logger = logging.getLogger(__name__)

# Chain names carry the bridge, so two sandbox networks (say two engines on one
# host, or a test's own network) never overwrite each other's rules.
# iptables allows 28 characters; a Linux interface name has at most 15.
FORWARD_PREFIX = "ATELIER-FWD-"
INPUT_PREFIX = "ATELIER-IN-"

# Written exactly as `iptables-save` prints them, so the installed chains can be
# compared to the policy line by line.
IPV4_BLOCKED = (
    "169.254.0.0/16",  # link-local, including the cloud metadata address 169.254.169.254
    "168.63.129.16/32",  # Azure's wireserver / metadata host: a public-looking address in no private range
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",  # carrier-grade NAT, used by some clouds internally (Alibaba metadata 100.100.100.200)
    "192.0.0.0/24",  # IETF protocol assignments (Oracle's legacy metadata 192.0.0.192)
    "198.18.0.0/15",  # benchmarking, used for internal appliances
    "127.0.0.0/8",
    "0.0.0.0/8",
    "224.0.0.0/4",
    "240.0.0.0/4",
)
IPV6_BLOCKED = (
    "fd00:ec2::254/128",  # AWS's IPv6 metadata address (also inside fc00::/7 below; named for the reader)
    "::1/128",  # loopback
    "::/128",  # unspecified: means the host itself
    "::ffff:0.0.0.0/96",  # IPv4-mapped: would carry any IPv4 address past the IPv4 rules
    "64:ff9b::/96",  # NAT64: a NAT64 gateway turns 64:ff9b::a9fe:a9fe into 169.254.169.254
    "64:ff9b:1::/48",  # local-use NAT64
    "2002::/16",  # 6to4: embeds an IPv4 address (2002:a9fe:a9fe:: -> 169.254.169.254)
    "2001::/32",  # Teredo: embeds IPv4 addresses
    "100::/64",  # discard-only
    "2001:db8::/32",  # documentation
    "fc00::/7",  # unique local (private), including fd00:ec2::254
    "fe80::/10",  # link-local: the host's end of the bridge has one
    "fec0::/10",  # deprecated site-local
    "ff00::/8",  # multicast
)


@dataclass(frozen=True)
class NetworkSettings:
    name: str
    bridge: str
    subnet: str
    dns: tuple[str, ...]


@dataclass(frozen=True)
class Family:
    name: str
    version: int
    iptables: str
    blocked: tuple[str, ...]
    reject: str
    host_prefix: int


IPV4 = Family("IPv4", 4, "iptables", IPV4_BLOCKED, "icmp-admin-prohibited", 32)
IPV6 = Family("IPv6", 6, "ip6tables", IPV6_BLOCKED, "icmp6-adm-prohibited", 128)
FAMILIES = (IPV4, IPV6)


def chain_names(bridge: str) -> tuple[str, str]:
    """(forward chain, input chain) for a bridge."""
    if not bridge or len(bridge) > 15 or not all(c.isalnum() or c in "-_." for c in bridge):
        raise NetworkPolicyError(f"invalid bridge name {bridge!r} (SANDBOX_NETWORK_BRIDGE: 1-15 of A-Z a-z 0-9 . _ -)")
    return FORWARD_PREFIX + bridge, INPUT_PREFIX + bridge


def host_resolvers(resolv_conf: Path = Path("/etc/resolv.conf")) -> list[str]:
    """Nameservers of the host, both families (Docker's embedded DNS forwards to them)."""
    servers: list[str] = []
    try:
        lines = resolv_conf.read_text().splitlines()
    except OSError:
        return servers
    for line in lines:
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "nameserver":
            try:
                ipaddress.ip_address(fields[1])  # a zone id (fe80::1%eth0) does not parse: skipped
            except ValueError:
                continue
            servers.append(fields[1])
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
            enable_ipv6=False,  # said explicitly: no IPv6 addresses or routes (ip6tables polices it anyway)
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


# -- the rules ----------------------------------------------------------------
def policy_rules(net: NetworkSettings, resolvers: list[str]) -> dict[str, dict[str, list[str]]]:
    """Per family ("IPv4", "IPv6"), the rules of both chains in `iptables-save` form."""
    forward_chain, input_chain = chain_names(net.bridge)
    rules: dict[str, dict[str, list[str]]] = {}
    for family in FAMILIES:
        servers = [s for s in resolvers if ipaddress.ip_address(s).version == family.version]
        dns = [
            f"-d {ipaddress.ip_address(s).compressed}/{family.host_prefix} -p {proto} -m {proto} --dport 53"
            for s in servers
            for proto in ("udp", "tcp")
        ]
        established = "-m conntrack --ctstate RELATED,ESTABLISHED"
        reject = f"-j REJECT --reject-with {family.reject}"
        forward = [f"-A {forward_chain} {established} -j RETURN"]
        forward += [f"-A {forward_chain} {match} -j RETURN" for match in dns]
        forward += [f"-A {forward_chain} -d {cidr} {reject}" for cidr in family.blocked]
        forward.append(f"-A {forward_chain} -j RETURN")  # the public internet
        inbound = [f"-A {input_chain} {established} -j ACCEPT"]
        if family is IPV6:
            # Neighbour discovery is IPv6's ARP: without it a sandbox cannot find its
            # gateway, so IPv6 would be refused by accident rather than policed. It reaches
            # no service on the host (ARP is not filtered by iptables either).
            inbound += [f"-A {input_chain} -p ipv6-icmp -m icmp6 --icmpv6-type {t} -j ACCEPT" for t in (135, 136)]
        inbound += [f"-A {input_chain} {match} -j ACCEPT" for match in dns]  # a resolver on the host itself
        inbound.append(f"-A {input_chain} {reject}")
        rules[family.name] = {forward_chain: forward, input_chain: inbound}
    return rules


def jumps(bridge: str) -> list[tuple[str, str]]:
    """(parent chain, rule) of the jumps into the policy, each of which must come first in its parent."""
    forward_chain, input_chain = chain_names(bridge)
    return [
        ("FORWARD", "-A FORWARD -j DOCKER-USER"),
        ("DOCKER-USER", f"-A DOCKER-USER -i {bridge} -j {forward_chain}"),
        ("INPUT", f"-A INPUT -i {bridge} -j {input_chain}"),
    ]


def parse_save(text: str) -> dict[str, list[str]]:
    """The filter table of an `iptables-save -t filter` listing: chain -> its rules, in order."""
    chains: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(":"):
            chains.setdefault(line[1:].split()[0], [])
        elif line.startswith("-A "):
            chains.setdefault(line.split()[1], []).append(line)
    return chains


def _is_policy_jump(rule: str) -> bool:
    return any(f"-j {prefix}" in rule for prefix in (FORWARD_PREFIX, INPUT_PREFIX))


def _only_another_interface(rule: str, bridge: str) -> bool:
    """Whether the rule matches packets coming in on one named interface other
    than `bridge` (no `!`, no `+` wildcard), so it never sees the bridge's traffic."""
    tokens = rule.split()
    if "-i" not in tokens:
        return False
    at = tokens.index("-i")
    interface = tokens[at + 1] if at + 1 < len(tokens) else ""
    negated = at > 0 and tokens[at - 1] == "!"
    return bool(interface) and not negated and not interface.endswith("+") and interface != bridge


def _ahead_of(rules: list[str], jump: str, parent: str, bridge: str) -> list[str]:
    """Rules that come before `jump` in `parent` and could decide first.
    Other sandbox networks' jumps, and any rule bound to another named
    interface, cannot: they never match packets from this bridge."""
    index = rules.index(jump)
    if parent == "FORWARD":
        return rules[:index]
    return [rule for rule in rules[:index] if not _is_policy_jump(rule) and not _only_another_interface(rule, bridge)]


def policy_problems(
    bridge: str, expected: dict[str, dict[str, list[str]]], listings: dict[str, dict[str, list[str]] | None]
) -> list[str]:
    """What differs between the installed tables (`parse_save` per family; None:
    the family does not exist in the kernel) and the policy. Empty: in place."""
    problems: list[str] = []
    for family in FAMILIES:
        listing = listings.get(family.name)
        if listing is None:
            continue  # IPv6 switched off in the kernel: nothing to police
        for chain, rules in expected[family.name].items():
            if chain not in listing:
                problems.append(f"{family.name}: chain {chain} is missing")
            elif listing[chain] != rules:
                have = listing[chain]
                diff = next((r for r in rules if r not in have), None) or next((r for r in have if r not in rules), "")
                problems.append(
                    f"{family.name}: chain {chain} differs from the policy ({len(have)} rules, expected "
                    f"{len(rules)}; first difference: {diff or 'order'})"
                )
        for parent, jump in jumps(bridge):
            rules = listing.get(parent, [])
            if jump not in rules:
                problems.append(f"{family.name}: no rule `{jump}`")
            elif ahead := _ahead_of(rules, jump, parent, bridge):
                problems.append(f"{family.name}: `{ahead[0]}` comes before `{jump}` in {parent}")
    return problems


def restore_input(bridge: str, expected: dict[str, list[str]], listing: dict[str, list[str]]) -> str:
    """One `iptables-restore --noflush` transaction for a family: it refills the
    policy chains (declaring a chain creates or flushes it) and puts each jump
    first in its parent (deleting the old one in the same transaction, so no
    packet ever passes between the two). All or nothing."""
    lines = ["*filter"]
    lines += [f":{chain} - [0:0]" for chain in expected]
    if "DOCKER-USER" not in listing:  # Docker creates it (IPv4; IPv6 only with its ip6tables option)
        lines.append(":DOCKER-USER - [0:0]")
    for rules in expected.values():
        lines += rules
    for parent, jump in jumps(bridge):
        rules = listing.get(parent, [])
        if jump in rules and not _ahead_of(rules, jump, parent, bridge):
            continue
        if jump in rules:
            lines.append("-D" + jump[2:])
        lines.append(f"-I {parent} 1" + jump[len(f"-A {parent}") :])
    lines.append("COMMIT")
    return "\n".join(lines) + "\n"


# -- reading, applying, checking ------------------------------------------------
_READ_SCRIPT = (
    "iptables-save -t filter || exit 3; echo '@@ATELIER-IPV6@@'; "
    # No IPv6 in the kernel (ipv6.disable=1): nothing to police, and ip6tables-save would fail.
    "if [ -e /proc/net/if_inet6 ]; then ip6tables-save -t filter || exit 4; else echo '@@ATELIER-NO-IPV6@@'; fi"
)


@dataclass
class EgressPolicy:
    net: NetworkSettings
    runner: Runner
    resolvers: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.resolvers = self.resolvers or list(self.net.dns) or host_resolvers()
        self.expected = policy_rules(self.net, self.resolvers)

    def read(self) -> dict[str, dict[str, list[str]] | None]:
        proc = self.runner.run(_READ_SCRIPT)
        if proc.returncode != 0 or "@@ATELIER-IPV6@@" not in proc.stdout:
            hint = " (is iptables installed on the Docker host?)" if proc.returncode in (3, 127) else ""
            raise NetworkPolicyError(
                f"cannot read the firewall in {self.runner.where}: exit {proc.returncode}{hint}: "
                f"{proc.stderr.strip()[-300:]}"
            )
        v4, v6 = proc.stdout.split("@@ATELIER-IPV6@@", 1)
        return {IPV4.name: parse_save(v4), IPV6.name: None if "@@ATELIER-NO-IPV6@@" in v6 else parse_save(v6)}

    def problems(self) -> list[str]:
        return policy_problems(self.net.bridge, self.expected, self.read())

    def apply(self) -> None:
        listings = self.read()
        script = []
        for family in FAMILIES:
            listing = listings[family.name]
            if listing is None:
                continue
            text = restore_input(self.net.bridge, self.expected[family.name], listing)
            # A quoted here-document: the shell expands nothing in it.
            script.append(f"{family.iptables}-restore -w 5 --noflush <<'ATELIER_RULES'\n{text}ATELIER_RULES")
        proc = self.runner.run("set -e\n" + "\n".join(script))
        if proc.returncode != 0:
            raise NetworkPolicyError(
                f"applying the egress policy in {self.runner.where} failed (exit {proc.returncode}): "
                f"{proc.stderr.strip()[-500:]}. It needs root (or NET_ADMIN) on the Docker host."
            )


def apply_egress_policy(net: NetworkSettings, runner: Runner) -> None:
    """Install the policy for the sandbox bridge in `runner`'s namespace (needs
    root on the Docker host); afterwards it must read back exactly as written."""
    policy = EgressPolicy(net, runner)
    policy.apply()
    if problems := policy.problems():
        raise NetworkPolicyError(f"the egress policy does not read back as applied: {'; '.join(problems)}")


def egress_policy_problems(net: NetworkSettings, runner: Runner) -> list[str]:
    """What is missing from the installed policy (empty when it is in place)."""
    try:
        return EgressPolicy(net, runner).problems()
    except NetworkPolicyError as exc:
        return [str(exc)]


def remove_egress_policy(net: NetworkSettings, runner: Runner) -> None:
    """Take one bridge's policy out (both families): its jumps, then its chains.
    For tests and for retiring a network; Docker's FORWARD -> DOCKER-USER stays."""
    forward_chain, input_chain = chain_names(net.bridge)
    script = []
    for family in FAMILIES:
        ipt = f"{family.iptables} -w 5"
        for parent, jump in jumps(net.bridge)[1:]:
            rule = jump[len(f"-A {parent} ") :]
            script.append(f"while {ipt} -C {parent} {rule} 2>/dev/null; do {ipt} -D {parent} {rule}; done")
        for chain in (forward_chain, input_chain):
            script.append(f"{ipt} -F {chain} 2>/dev/null && {ipt} -X {chain}")
    runner.run("\n".join(script) + "\ntrue")
