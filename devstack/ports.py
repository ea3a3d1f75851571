"""Ports on the loopback interface: a free one to listen on, and whether one is listened on."""

from __future__ import annotations

import random
import socket
from pathlib import Path

# The kernel hands out ports from its ephemeral range to outgoing connections as well, so a port
# picked there and free now may be a connection's by the time its server binds it (a server of
# several parts, SeaweedFS say, connects to itself while its later parts start). Ports are picked
# below that range instead, where only listeners go.
LOWEST = 10_000
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LINUX_EPHEMERAL_START = 32_768
# Ports browsers refuse to load anything from (the Fetch standard's "bad ports"; Chromium answers
# ERR_UNSAFE_PORT): the ones in the range picked from. A browser test's server there never loads.
BROWSER_BLOCKED = frozenset({10080})


def _below_ephemeral() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return LINUX_EPHEMERAL_START


def free_port() -> int:
    """A TCP port nothing listens on now, outside the range outgoing connections take theirs from
    and none a browser refuses, for a server about to start."""
    highest = _below_ephemeral() - 1
    for _ in range(200):
        port = random.randint(LOWEST, highest)  # noqa: S311 - spreading test servers, not a secret
        if port in BROWSER_BLOCKED:
            continue
        with socket.socket() as candidate:
            try:
                candidate.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as fallback:  # that range full: the kernel's choice, as before
        fallback.bind(("127.0.0.1", 0))
        return int(fallback.getsockname()[1])


def free_ports(count: int) -> list[int]:
    """`count` different free ports, for a server of several parts that each listen on one: picked
    one by one, the same port could come twice (nothing holds it in between), and the part that
    binds it second would fail to start."""
    picked: list[int] = []
    while len(picked) < count:
        port = free_port()
        if port not in picked:
            picked.append(port)
    return picked


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
