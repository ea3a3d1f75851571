"""Egress policy: the host's own services and private ranges are unreachable.

Only listeners this test starts, on addresses it creates, are contacted: one
on the sandbox bridge's gateway (the host itself) and one in a network
namespace on a private address made here.
"""

from __future__ import annotations

import secrets
import socket
import subprocess
import threading
from collections.abc import Iterator

import docker
import pytest
from django.conf import settings

from tests.support import has_executable, require

# Its labs take fixed addresses, host routes and firewall rules of this machine: under `make test` they run
# on one worker, with the second engine's tests (tests/support/markers.py).
pytestmark = [pytest.mark.timeout(180), pytest.mark.xdist_group("host-network")]

# (host side, listener side) of a /30 made for the test. The link-local pair
# stands for the cloud metadata address (169.254.169.254), in the same
# 169.254.0.0/16 range, without shadowing the real one on this machine.
PRIVATE_PAIRS = {
    "private-range": ("10.213.77.1", "10.213.77.2"),
    "link-local-metadata-range": ("169.254.77.1", "169.254.77.2"),
}

CONNECT = (
    'python3 -c "import socket,sys\n'
    "try:\n socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5); print('CONNECTED')\n"
    "except OSError as e: print('BLOCKED', type(e).__name__)\" {host} {port}"
)


def _listen(host: str) -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind((host, 0))
    server.listen(8)

    def accept_some() -> None:
        for _ in range(8):
            try:
                server.accept()[0].close()
            except OSError:
                return

    threading.Thread(target=accept_some, daemon=True).start()
    return server, server.getsockname()[1]


@pytest.fixture(params=sorted(PRIVATE_PAIRS))
def private_listener(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    """A TCP listener in a network namespace we create, on a private address."""
    private_net_host, private_net_peer = PRIVATE_PAIRS[request.param]
    require(has_executable("ip") and has_executable("iptables"), "iproute2 and iptables on the host")
    tag = secrets.token_hex(3)
    ns, host_if, peer_if = f"atl-test-{tag}", f"atlh{tag}", f"atlp{tag}"
    commands = [
        ["ip", "netns", "add", ns],
        ["ip", "link", "add", host_if, "type", "veth", "peer", "name", peer_if],
        ["ip", "link", "set", peer_if, "netns", ns],
        ["ip", "addr", "add", f"{private_net_host}/30", "dev", host_if],
        ["ip", "link", "set", host_if, "up"],
        ["ip", "-n", ns, "addr", "add", f"{private_net_peer}/30", "dev", peer_if],
        ["ip", "-n", ns, "link", "set", peer_if, "up"],
        ["ip", "-n", ns, "route", "add", "default", "via", private_net_host],
    ]
    server = None
    try:
        for command in commands:
            subprocess.run(command, check=True, capture_output=True)
        server = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                ns,
                "python3",
                "-c",
                (
                    "import socket\ns=socket.socket();s.bind(('0.0.0.0',8765));s.listen(8);print('up',flush=True)\n"
                    "while True: s.accept()[0].close()"
                ),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "up"
        yield private_net_peer, 8765
    finally:
        if server is not None:
            server.kill()
            server.wait()
        subprocess.run(["ip", "link", "del", host_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _gateway() -> str:
    network = docker.from_env().networks.get(settings.SANDBOX_NETWORK_NAME)
    return str(network.attrs["IPAM"]["Config"][0]["Gateway"])


def test_a_listener_on_the_bridge_gateway_is_unreachable_from_the_sandbox(sandbox):
    gateway = _gateway()
    server, port = _listen(gateway)
    try:
        with socket.create_connection((gateway, port), timeout=5):
            pass  # control: the listener is up and reachable from the host
        result = sandbox.run_command(CONNECT.format(host=gateway, port=port), timeout=60)
        assert result.output.startswith("BLOCKED"), result.output
    finally:
        server.close()


def test_private_and_metadata_range_addresses_are_unreachable_from_the_sandbox(sandbox, private_listener):
    host, port = private_listener
    with socket.create_connection((host, port), timeout=5):
        pass  # control: reachable from the host through the veth pair
    result = sandbox.run_command(CONNECT.format(host=host, port=port), timeout=60)
    assert result.output.startswith("BLOCKED"), result.output


def test_network_mode_none_leaves_only_loopback(sandbox_image):
    from tests.support.sandboxes import start_with

    box = start_with(network_mode="none")
    try:
        result = box.run_command(
            "python3 -c 'import socket; print(*[name for _, name in socket.if_nameindex()])'", timeout=30
        )
        assert result.output.split() == ["lo"]
    finally:
        box.stop()
