"""The egress policy's rules, drift detection and start guard, with a fake
firewall (the same checks run under real gVisor in test_egress_policy.py)."""

from __future__ import annotations

import ipaddress
import subprocess

import pytest

from sandboxes.egress_guard import EgressGuard
from sandboxes.firewall import NetworkPolicyError
from sandboxes.network import (
    IPV4_BLOCKED,
    IPV6_BLOCKED,
    EgressPolicy,
    NetworkSettings,
    jumps,
    parse_save,
    policy_problems,
    restore_input,
)

NET = NetworkSettings(name="n", bridge="atl-x0", subnet="", dns=("10.0.0.2", "fd00::53"))


def _covered(address: str, ranges: tuple[str, ...]) -> bool:
    ip = ipaddress.ip_address(address)
    return any(ip in ipaddress.ip_network(cidr) for cidr in ranges if ipaddress.ip_network(cidr).version == ip.version)


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",  # AWS, GCP, Azure, Oracle metadata
        "168.63.129.16",  # Azure wireserver
        "100.100.100.200",  # Alibaba metadata
        "10.1.2.3",
        "127.0.0.1",
        "fd00:ec2::254",  # AWS IPv6 metadata
        "::1",
        "::ffff:169.254.169.254",  # IPv4-mapped
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "fe80::1",
        "fc00::1",
    ],
)
def test_metadata_private_and_loopback_addresses_are_refused(address):
    assert _covered(address, IPV4_BLOCKED + IPV6_BLOCKED)


@pytest.mark.parametrize("address", ["1.1.1.1", "151.101.0.223", "2606:4700:4700::1111", "2a04:4e42::223"])
def test_public_addresses_pass(address):
    assert not _covered(address, IPV4_BLOCKED + IPV6_BLOCKED)


class FakeFirewall:
    """Answers the policy's scripts like iptables-save / iptables-restore would."""

    where = "a fake namespace"

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, list[str]]] = {
            "IPv4": {
                "INPUT": [],
                "FORWARD": ["-A FORWARD -j DOCKER-USER"],
                "DOCKER-USER": ["-A DOCKER-USER -j RETURN"],
            },
            "IPv6": {"INPUT": [], "FORWARD": []},
        }
        self.reads = 0
        self.applies = 0
        self.fail_apply = False

    def save(self, family: str) -> str:
        lines = ["*filter"] + [f":{c} - [0:0]" for c in self.tables[family]]
        lines += [rule for rules in self.tables[family].values() for rule in rules]
        return "\n".join([*lines, "COMMIT"]) + "\n"

    def run(self, script: str) -> subprocess.CompletedProcess[str]:
        if script.startswith("iptables-save"):
            self.reads += 1
            out = self.save("IPv4") + "@@ATELIER-IPV6@@\n" + self.save("IPv6")
            return subprocess.CompletedProcess([], 0, out, "")
        self.applies += 1
        if self.fail_apply:
            return subprocess.CompletedProcess([], 4, "", "iptables-restore: Permission denied (you must be root)")
        for block in script.split("-restore -w 5 --noflush <<'ATELIER_RULES'\n")[1:]:
            family = "IPv6" if "icmp6" in block else "IPv4"
            self._restore(family, block.split("ATELIER_RULES")[0])
        return subprocess.CompletedProcess([], 0, "", "")

    def _restore(self, family: str, text: str) -> None:
        table = self.tables[family]
        for line in text.splitlines():
            parts = line.split()
            if line.startswith(":"):
                table[line[1:].split()[0]] = []
            elif parts and parts[0] == "-A":
                table[parts[1]].append(line)
            elif parts and parts[0] == "-D":
                table[parts[1]].remove("-A" + line[2:])
            elif parts and parts[0] == "-I":
                table[parts[1]].insert(int(parts[2]) - 1, " ".join(["-A", parts[1], *parts[3:]]))


def test_an_applied_policy_has_no_problems_and_a_flush_is_reported():
    firewall = FakeFirewall()
    policy = EgressPolicy(NET, firewall)
    policy.apply()
    assert policy.problems() == []
    firewall.tables["IPv6"]["ATELIER-IN-atl-x0"] = []  # ip6tables -F
    assert policy.problems() == [
        (
            "IPv6: chain ATELIER-IN-atl-x0 differs from the policy (0 rules, expected 6; first difference: "
            "-A ATELIER-IN-atl-x0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT)"
        )
    ]


def test_the_resolvers_pass_in_their_own_family_only():
    policy = EgressPolicy(NET, FakeFirewall())
    assert (
        "-A ATELIER-FWD-atl-x0 -d 10.0.0.2/32 -p udp -m udp --dport 53 -j RETURN"
        in policy.expected["IPv4"]["ATELIER-FWD-atl-x0"]
    )
    assert (
        "-A ATELIER-FWD-atl-x0 -d fd00::53/128 -p tcp -m tcp --dport 53 -j RETURN"
        in policy.expected["IPv6"]["ATELIER-FWD-atl-x0"]
    )
    assert not any("fd00::53" in r for r in policy.expected["IPv4"]["ATELIER-FWD-atl-x0"])


def test_a_rule_inserted_above_our_jump_is_moved_below_it_in_one_transaction():
    listing = parse_save(
        "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -i atl-x0 -j ACCEPT\n-A INPUT -i atl-x0 -j ATELIER-IN-atl-x0\n"
    )
    expected = {"ATELIER-IN-atl-x0": ["-A ATELIER-IN-atl-x0 -j REJECT --reject-with icmp-admin-prohibited"]}
    problems = policy_problems("atl-x0", {"IPv4": expected, "IPv6": {}}, {"IPv4": listing, "IPv6": None})
    assert (
        "IPv4: `-A INPUT -i atl-x0 -j ACCEPT` comes before `-A INPUT -i atl-x0 -j ATELIER-IN-atl-x0` in INPUT"
        in problems
    )
    text = restore_input("atl-x0", expected, listing)
    # Delete and re-insert in the same COMMIT: no moment without the jump.
    assert text.index("-D INPUT -i atl-x0 -j ATELIER-IN-atl-x0") < text.index(
        "-I INPUT 1 -i atl-x0 -j ATELIER-IN-atl-x0"
    )
    assert text.rstrip().endswith("COMMIT")


def test_other_sandbox_networks_jumps_may_come_first():
    rules = ["-A INPUT -i atl-y0 -j ATELIER-IN-atl-y0", "-A INPUT -i atl-x0 -j ATELIER-IN-atl-x0"]
    listing = {"INPUT": rules, "FORWARD": ["-A FORWARD -j DOCKER-USER"], "DOCKER-USER": [jumps("atl-x0")[1][1]]}
    assert policy_problems("atl-x0", {"IPv4": {}, "IPv6": {}}, {"IPv4": listing, "IPv6": None}) == []


def test_a_rule_for_another_named_interface_may_come_first_but_a_wildcard_or_negation_may_not():
    """Another network's ACCEPT on its own bridge never sees this bridge's packets;
    `atl-+` or `! -i eth0` would."""
    ours = "-A INPUT -i atl-x0 -j ATELIER-IN-atl-x0"
    expected: dict[str, dict[str, list[str]]] = {"IPv4": {}, "IPv6": {}}

    def problems(first: str) -> list[str]:
        listing = {
            "INPUT": [first, ours],
            "FORWARD": ["-A FORWARD -j DOCKER-USER"],
            "DOCKER-USER": [jumps("atl-x0")[1][1]],
        }
        return policy_problems("atl-x0", expected, {"IPv4": listing, "IPv6": None})

    assert problems("-A INPUT -i atl-y0 -j ACCEPT") == []
    assert problems("-A INPUT -i atl-+ -j ACCEPT") == [
        f"IPv4: `-A INPUT -i atl-+ -j ACCEPT` comes before `{ours}` in INPUT"
    ]
    assert problems("-A INPUT ! -i eth0 -j ACCEPT") == [
        f"IPv4: `-A INPUT ! -i eth0 -j ACCEPT` comes before `{ours}` in INPUT"
    ]
    assert problems("-A INPUT -j ACCEPT") == [f"IPv4: `-A INPUT -j ACCEPT` comes before `{ours}` in INPUT"]


def test_the_guard_reads_once_per_ttl_and_restores_a_drifted_policy():
    firewall = FakeFirewall()
    now = [100.0]
    guard = EgressGuard(EgressPolicy(NET, firewall), ttl=5.0, clock=lambda: now[0])
    guard.ensure()  # first start: applies
    assert firewall.applies == 1
    reads = firewall.reads
    guard.ensure()
    guard.ensure()
    assert firewall.reads == reads  # within the TTL nothing is read, nothing applied
    firewall.tables["IPv4"]["ATELIER-FWD-atl-x0"] = []  # iptables -F
    now[0] += 6
    guard.ensure()
    assert firewall.applies == 2
    assert guard.repairs == 2
    assert EgressPolicy(NET, firewall).problems() == []


def test_the_guard_refuses_the_start_when_the_policy_cannot_be_restored():
    firewall = FakeFirewall()
    firewall.fail_apply = True
    guard = EgressGuard(EgressPolicy(NET, firewall), ttl=5.0)
    with pytest.raises(NetworkPolicyError) as refused:
        guard.ensure()
    message = str(refused.value)
    assert "is not in place" in message
    assert "Permission denied" in message
    assert "No sandbox starts until it is" in message
    assert "sandbox_doctor --fix" in message
    with pytest.raises(NetworkPolicyError):
        guard.ensure()  # a refusal is not cached as a success


def test_a_refused_policy_means_no_sandbox_starts(monkeypatch, sandbox_image):
    """start_sandbox turns the guard's refusal into a SandboxError, before any container exists."""
    import docker

    from sandboxes import docker_runtime
    from tests.support.sandboxes import TEST_LABELS

    firewall = FakeFirewall()
    firewall.fail_apply = True
    monkeypatch.setattr(docker_runtime, "egress_guard", lambda *_: EgressGuard(EgressPolicy(NET, firewall)))
    client = docker.from_env()
    before = {c.id for c in client.containers.list(all=True, filters={"label": "atelier.owner=egress-refusal"})}
    with pytest.raises(docker_runtime.SandboxError, match="egress policy for bridge atl-x0 is not in place"):
        docker_runtime.start_sandbox({**TEST_LABELS, "atelier.owner": "egress-refusal"})
    after = {c.id for c in client.containers.list(all=True, filters={"label": "atelier.owner=egress-refusal"})}
    assert after == before
