"""Egress policy under real gVisor: IPv6, the cloud metadata addresses, a policy
that drifts between two sandbox starts, sandbox_doctor, and a worker that is not
in the Docker daemon's network namespace.

Every test uses a sandbox network of its own (own bridge, own chains), so that
flushing its chains never opens the sandboxes of anyone else testing on this
machine. The network is created WITH IPv6 (a ULA subnet), as an operator who
enables it would have it: without an IPv6 address a sandbox cannot even try,
and a test of the IPv6 rules could not fail.

Only addresses this module creates are contacted: the test bridge's gateway
(the host itself) and a network namespace made here ("the lab"), which holds
the addresses to refuse (168.63.129.16, fd00:ec2::254) and, as controls that
show the sandbox does reach the lab at all, 198.51.100.77 and 2001:2::77
(documentation and benchmarking ranges, which the policy lets through like any
public address). The host routes to the lab for the test's duration.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from django.core.management import CommandError, call_command

from sandboxes.docker_runtime import DockerSandbox
from sandboxes.egress_guard import POLICY_CHECK_TTL
from sandboxes.firewall import HELPER_LABEL, LocalRunner
from sandboxes.network import (
    NetworkSettings,
    chain_names,
    egress_policy_problems,
    remove_egress_policy,
)
from tests.support import has_executable, require
from tests.support.runs import wait_until

# Its labs take fixed addresses, host routes and firewall rules of this machine: under `make test` they run
# on one worker, with the second engine's tests (tests/support/markers.py).
pytestmark = [pytest.mark.timeout(240), pytest.mark.xdist_group("host-network")]

AZURE_WIRESERVER = "168.63.129.16"
AWS_METADATA_V6 = "fd00:ec2::254"
PUBLIC_V4 = "198.51.100.77"  # control: not a range the policy refuses
PUBLIC_V6 = "2001:2::77"  # control: not a range the policy refuses
LAB_PORT = 8765
REPO = Path(__file__).resolve().parents[2]

CONNECT = (
    'python3 -c "import socket,sys\n'
    "try:\n socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5); print('CONNECTED')\n"
    "except OSError as e: print('BLOCKED', type(e).__name__, e)\" {host} {port}"
)


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(argv), capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}"
    return done


def _wait_for_carrier(interface: str) -> None:
    """A veth pair reports its carrier a moment after both ends are up; routes through it wait for that."""
    carrier = Path("/sys/class/net") / interface / "carrier"
    deadline = time.monotonic() + 10
    while carrier.read_text().strip() != "1":
        assert time.monotonic() < deadline, f"{interface} has no carrier after 10 s"
        time.sleep(0.05)


def _routes_of_the_host(routed: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """Routes this machine already has for the lab's addresses (a cloud VM may route its metadata host
    explicitly): the lab borrows them for the test and gives them back."""
    kept = []
    for family, cidr, _ in routed:
        for line in _run("ip", family, "route", "show", "exact", cidr).stdout.splitlines():
            kept.append((family, line.strip()))
    return kept


def _host_connects(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=5):
            return True
    except OSError:
        return False


def _sandbox_connects(box: DockerSandbox, host: str, port: int) -> str:
    return str(box.run_command(CONNECT.format(host=host, port=port), timeout=60).output.strip())


@pytest.fixture
def own_network(sandbox_image: str) -> Iterator[NetworkSettings]:
    """A sandbox network of this test's own, with IPv6 on; its policy and itself removed afterwards."""
    require(has_executable("iptables") and has_executable("ip6tables"), "iptables and ip6tables on the host")
    tag = secrets.token_hex(3)
    net = NetworkSettings(name=f"atelier-egtest-{tag}", bridge=f"atl-eg{tag}", subnet="", dns=())
    client = docker.from_env()
    network = client.networks.create(
        net.name,
        driver="bridge",
        enable_ipv6=True,
        ipam=docker.types.IPAMConfig(pool_configs=[docker.types.IPAMPool(subnet=f"fd5e:{tag[:4]}::/64")]),
        options={"com.docker.network.bridge.name": net.bridge, "com.docker.network.bridge.enable_icc": "false"},
    )
    try:
        yield net
    finally:
        try:
            # Fails loudly if a test left a sandbox on it (each stops its own: frozen ones need a thaw).
            network.remove()
        finally:
            remove_egress_policy(net, LocalRunner())


def _gateways(net: NetworkSettings) -> dict[int, str]:
    """The host's addresses on the bridge, per IP version (Docker gives the first of each subnet)."""
    configs = docker.from_env().networks.get(net.name).attrs["IPAM"]["Config"]
    gateways: dict[int, str] = {}
    for config in configs:
        subnet = ipaddress.ip_network(config["Subnet"])
        gateways[subnet.version] = config.get("Gateway", "").split("/")[0] or str(subnet[1])
    return gateways


@pytest.fixture
def lab() -> Iterator[str]:
    """A network namespace reached from the host through a veth pair, holding the
    addresses to refuse and the control addresses, with a dual-stack listener."""
    tag = secrets.token_hex(3)
    ns, host_if, peer_if = f"atl-lab-{tag}", f"atlh{tag}", f"atlp{tag}"
    routed = [("-4", f"{AZURE_WIRESERVER}/32", "10.213.78.2"), ("-4", f"{PUBLIC_V4}/32", "10.213.78.2")]
    routed += [("-6", f"{AWS_METADATA_V6}/128", f"fd5f:{tag[:4]}::2"), ("-6", f"{PUBLIC_V6}/128", f"fd5f:{tag[:4]}::2")]
    setup = [
        ["ip", "netns", "add", ns],
        ["ip", "link", "add", host_if, "type", "veth", "peer", "name", peer_if],
        ["ip", "link", "set", peer_if, "netns", ns],
        ["ip", "addr", "add", "10.213.78.1/30", "dev", host_if],
        ["ip", "-6", "addr", "add", f"fd5f:{tag[:4]}::1/64", "dev", host_if, "nodad"],
        ["ip", "link", "set", host_if, "up"],
        ["ip", "-n", ns, "link", "set", "lo", "up"],
        ["ip", "-n", ns, "addr", "add", "10.213.78.2/30", "dev", peer_if],
        ["ip", "-n", ns, "-6", "addr", "add", f"fd5f:{tag[:4]}::2/64", "dev", peer_if, "nodad"],
        ["ip", "-n", ns, "link", "set", peer_if, "up"],
        ["ip", "-n", ns, "route", "add", "default", "via", "10.213.78.1"],
        ["ip", "-n", ns, "-6", "route", "add", "default", "via", f"fd5f:{tag[:4]}::1"],
    ]
    for family, cidr, _ in routed:
        setup.append(["ip", "-n", ns, family, "addr", "add", cidr, "dev", "lo"])
    server = None
    borrowed = _routes_of_the_host(routed)
    try:
        for command in setup:
            _run(*command)
        _wait_for_carrier(host_if)
        for family, cidr, via in routed:
            _run("ip", family, "route", "replace", cidr, "via", via, "dev", host_if)
        server = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-c", (
                "import socket\ns=socket.socket(socket.AF_INET6)\n"
                "s.setsockopt(socket.IPPROTO_IPV6,socket.IPV6_V6ONLY,0)\n"
                f"s.bind(('::',{LAB_PORT}));s.listen(16);print('up',flush=True)\n"
                "while True: s.accept()[0].close()"
            )],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "up"
        for address in (AZURE_WIRESERVER, PUBLIC_V4, AWS_METADATA_V6, PUBLIC_V6):
            # Control: the host itself reaches every lab address, so a refusal from the sandbox is the policy's.
            assert _host_connects(address, LAB_PORT), address
        yield ns
    finally:
        if server is not None:
            server.kill()
            server.wait()
        subprocess.run(["ip", "link", "del", host_if], capture_output=True)  # takes the routes with it
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        for family, route in borrowed:
            subprocess.run(["ip", family, "route", "replace", *route.split()], capture_output=True)


def _start(net: NetworkSettings) -> DockerSandbox:
    from tests.support.sandboxes import start_with

    return start_with(network=net, network_mode="internet")


def _gateway_listener(address: str) -> tuple[socket.socket, int]:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    server = socket.socket(family)
    deadline = time.monotonic() + 10
    while True:  # a new IPv6 address is "tentative" (duplicate detection) for a moment: no bind yet
        try:
            server.bind((address, 0))
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    server.listen(16)

    def accept_all() -> None:
        while True:
            try:
                server.accept()[0].close()
            except OSError:
                return

    threading.Thread(target=accept_all, daemon=True).start()
    return server, server.getsockname()[1]


def test_ipv6_and_the_cloud_metadata_addresses_are_refused_from_a_sandbox(own_network, lab):
    box = _start(own_network)
    server = None
    try:
        gateway6 = _gateways(own_network)[6]  # the bridge gets it with its first sandbox
        server, port = _gateway_listener(gateway6)
        assert _host_connects(gateway6, port)  # control: the host's IPv6 end of the bridge listens
        # Controls: the sandbox does route IPv4 and IPv6 to the lab (public addresses pass) ...
        assert _sandbox_connects(box, PUBLIC_V4, LAB_PORT) == "CONNECTED"
        assert _sandbox_connects(box, PUBLIC_V6, LAB_PORT) == "CONNECTED"
        # ... but not to Azure's wireserver, AWS's IPv6 metadata address, or the host over IPv6.
        assert _sandbox_connects(box, AZURE_WIRESERVER, LAB_PORT).startswith("BLOCKED")
        assert _sandbox_connects(box, AWS_METADATA_V6, LAB_PORT).startswith("BLOCKED")
        assert _sandbox_connects(box, gateway6, port).startswith("BLOCKED")
    finally:
        if server is not None:
            server.close()
        box.stop()


def test_a_flushed_policy_is_restored_before_the_next_sandbox_starts(own_network, lab):
    forward_chain, input_chain = chain_names(own_network.bridge)
    first = _start(own_network)
    second = server = None
    try:
        gateway6 = _gateways(own_network)[6]
        server, port = _gateway_listener(gateway6)
        assert _sandbox_connects(first, AZURE_WIRESERVER, LAB_PORT).startswith("BLOCKED")
        # An admin's flush (or a firewall reload) of the chains, in both families:
        _run("iptables", "-w", "5", "-F", forward_chain)
        _run("ip6tables", "-w", "5", "-F", input_chain)
        # ... really opens the way (so this test can fail) ...
        assert _sandbox_connects(first, AZURE_WIRESERVER, LAB_PORT) == "CONNECTED"
        assert _sandbox_connects(first, gateway6, port) == "CONNECTED"
        time.sleep(POLICY_CHECK_TTL + 0.5)  # the last check is no longer trusted
        second = _start(own_network)  # the start checks, sees the drift and restores the policy
        assert egress_policy_problems(own_network, LocalRunner()) == []
        for box in (second, first):
            assert _sandbox_connects(box, AZURE_WIRESERVER, LAB_PORT).startswith("BLOCKED")
            assert _sandbox_connects(box, gateway6, port).startswith("BLOCKED")
        assert _sandbox_connects(second, PUBLIC_V4, LAB_PORT) == "CONNECTED"  # and the internet still works
    finally:
        if server is not None:
            server.close()
        first.stop()
        if second is not None:
            second.stop()


def test_the_policy_is_checked_before_each_start_not_reapplied(own_network):
    """Starts within the check's cache do not touch the tables at all; a
    moved jump (a rule some other tool inserted above ours) is seen and fixed."""
    _forward_chain, input_chain = chain_names(own_network.bridge)
    _start(own_network).stop()
    # Something inserted above our jump in INPUT would decide first.
    _run("iptables", "-w", "5", "-I", "INPUT", "1", "-i", own_network.bridge, "-j", "ACCEPT")
    try:
        problems = egress_policy_problems(own_network, LocalRunner())
        assert any("comes before" in p and input_chain in p for p in problems), problems
        time.sleep(POLICY_CHECK_TTL + 0.5)
        _start(own_network).stop()
        listing = _run("iptables", "-w", "5", "-S", "INPUT").stdout.splitlines()
        assert listing[1] == f"-A INPUT -i {own_network.bridge} -j {input_chain}"  # ours is first again
        assert egress_policy_problems(own_network, LocalRunner()) == []
    finally:
        subprocess.run(["iptables", "-w", "5", "-D", "INPUT", "-i", own_network.bridge, "-j", "ACCEPT"], check=False)


def test_sandbox_doctor_reports_a_missing_rule_and_says_where_it_looked(own_network, settings, capsys):
    settings.SANDBOX_NETWORK_NAME = own_network.name
    settings.SANDBOX_NETWORK_BRIDGE = own_network.bridge
    settings.SANDBOX_NETWORK_MODE = "internet"
    forward_chain, input_chain = chain_names(own_network.bridge)
    call_command("sandbox_doctor", "--quick", "--fix")
    assert "OK    network policy: checked in this process's network namespace" in capsys.readouterr().out
    # One rule gone (the Azure wireserver's) and one jump gone (IPv6 traffic to the host).
    _run("iptables", "-w", "5", "-D", forward_chain, "-d", f"{AZURE_WIRESERVER}/32", "-j", "REJECT",
         "--reject-with", "icmp-admin-prohibited")  # fmt: skip
    _run("ip6tables", "-w", "5", "-D", "INPUT", "-i", own_network.bridge, "-j", input_chain)
    with pytest.raises(CommandError):
        call_command("sandbox_doctor", "--quick")
    out = capsys.readouterr().out
    assert "FAIL  network policy: checked in this process's network namespace" in out
    assert f"IPv4: chain {forward_chain} differs from the policy" in out
    assert f"first difference: -A {forward_chain} -d {AZURE_WIRESERVER}/32" in out
    assert f"IPv6: no rule `-A INPUT -i {own_network.bridge} -j {input_chain}`" in out
    call_command("sandbox_doctor", "--quick", "--fix")
    assert "OK    network policy" in capsys.readouterr().out


def test_a_worker_outside_the_daemons_network_namespace_polices_the_daemons(own_network):
    """As a worker in a container (own network namespace, Docker socket mounted):
    the policy must land where the bridge is, not in the worker's own tables."""
    ns = f"atl-wk-{secrets.token_hex(3)}"
    _run("ip", "netns", "add", ns)
    try:
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "DJANGO_SETTINGS_MODULE": "config.test_settings",
            "SANDBOX_NETWORK_NAME": own_network.name,
            "SANDBOX_NETWORK_BRIDGE": own_network.bridge,
            "SANDBOX_NETWORK_MODE": "internet",
        }
        doctor = ["ip", "netns", "exec", ns, sys.executable, str(REPO / "manage.py"), "sandbox_doctor", "--quick"]
        before = subprocess.run(doctor, capture_output=True, text=True, env=env, timeout=120)
        assert before.returncode != 0
        assert "FAIL  network policy: checked in the Docker daemon's" in before.stdout, before.stdout + before.stderr
        fixed = subprocess.run([*doctor, "--fix"], capture_output=True, text=True, env=env, timeout=120)
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert "through a helper container" in fixed.stdout
        assert f"this process is in {_netns_of(ns)}" in fixed.stdout
        # In place where the bridge is (this test runs in the daemon's namespace) ...
        assert egress_policy_problems(own_network, LocalRunner()) == []
        # ... and nothing was written into the worker's own namespace.
        own = _run("ip", "netns", "exec", ns, "iptables-save", "-t", "filter").stdout
        assert own_network.bridge not in own
        # No helper left behind. Another test worker's helper may be on its way (each lives well under a
        # second), so the daemon is asked until none is there; one this test left would stay for good.
        wait_until(lambda: not _egress_helpers(), timeout=15, what="no egress helper container left")
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _egress_helpers() -> list[str]:
    # The list alone (no inspection of each): a helper removed meanwhile cannot fail the call.
    return [c["Id"] for c in docker.from_env().api.containers(all=True, filters={"label": HELPER_LABEL})]


def _netns_of(ns: str) -> str:
    return _run("ip", "netns", "exec", ns, "readlink", "/proc/self/ns/net").stdout.strip()


def test_a_sandbox_with_its_own_network_settings_is_started_through_the_guard(own_network):
    """start_with() passes the test network through _prepare_network: its chains exist only after a start."""
    forward_chain, _ = chain_names(own_network.bridge)
    assert forward_chain not in _run("iptables-save", "-t", "filter").stdout
    box = _start(own_network)
    box.stop()
    assert forward_chain in _run("iptables-save", "-t", "filter").stdout
