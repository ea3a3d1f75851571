"""Test servers listen on ports outside the kernel's range for outgoing connections, so no
connection made meanwhile (a server's own parts talking to each other) can take the port first."""

from __future__ import annotations

import socket

import pytest

from devstack import ports


def test_a_free_port_is_below_the_range_outgoing_connections_use_and_can_be_listened_on() -> None:
    first_ephemeral = int(ports.EPHEMERAL_RANGE.read_text().split()[0])
    picked = {ports.free_port() for _ in range(50)}
    assert all(ports.LOWEST <= port < first_ephemeral for port in picked)
    assert len(picked) > 40  # spread out: two workers starting servers at once rarely meet
    for port in list(picked)[:5]:
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))
            server.listen()


def test_a_port_someone_listens_on_is_never_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken, socket.socket() as free:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        free.bind(("127.0.0.1", 0))
        taken_port, free_port = taken.getsockname()[1], free.getsockname()[1]
        free.close()
        candidates = iter([taken_port, taken_port, free_port])
        monkeypatch.setattr(ports.random, "randint", lambda low, high: next(candidates))
        assert ports.free_port() == free_port


def test_a_port_browsers_refuse_is_never_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    # Chromium refuses every page from 10080 (ERR_UNSAFE_PORT): a stack there would fail its browser tests.
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        free_port = free.getsockname()[1]
    candidates = iter([10080, free_port])
    monkeypatch.setattr(ports.random, "randint", lambda low, high: next(candidates))
    assert ports.free_port() == free_port


def test_ports_for_the_parts_of_one_server_are_all_different(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as first, socket.socket() as second:
        first.bind(("127.0.0.1", 0))
        second.bind(("127.0.0.1", 0))
        one, other = first.getsockname()[1], second.getsockname()[1]
    candidates = iter([one, one, one, other])  # free each time it is asked, but the same port
    monkeypatch.setattr(ports.random, "randint", lambda low, high: next(candidates))
    assert ports.free_ports(2) == [one, other]
