"""Ports on the loopback interface: a free one to listen on, and whether one is listened on."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port nothing listens on now (the kernel's choice), for a server about to start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
