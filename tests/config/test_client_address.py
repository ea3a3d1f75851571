"""Where a request comes from, as the per-address limits count it: X-Forwarded-For is read from
the right, only as far as the proxies in TRUSTED_PROXIES wrote it, so a client cannot pick the
address it is counted under; an IPv6 client is counted as its /64. Pages, the API's event stream
and the run websockets all ask config/client_address.py."""

from __future__ import annotations

import secrets
from typing import Any, cast

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.http import StreamingHttpResponse
from django.test import AsyncClient, Client
from django.urls import reverse

from config.client_address import client_address
from config.routing import websocket_urlpatterns
from creations.events.store import store_events
from creations.models import RunStatus, Visibility
from tests.support.api import token_for
from tests.support.factories import make_run
from tests.support.fixtures.accounts import PASSWORD, Team

PROXY = "10.0.0.7"
TRUSTED = ["10.0.0.0/8", "2001:db8:ffff::/48"]


# Each test's requests fall in one of the rate limiter's windows, however slowly they run.
pytestmark = pytest.mark.usefixtures("rate_limit_clock")


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "trusted", "client"),
    [
        # No trusted proxy: the header is never read, whatever it says.
        ("203.0.113.9", ["198.51.100.1"], [], "203.0.113.9"),
        ("10.0.0.7", ["198.51.100.1"], [], "10.0.0.7"),
        # Behind a trusted proxy: the address it appended, not the ones the client wrote before it.
        (PROXY, ["198.51.100.1"], TRUSTED, "198.51.100.1"),
        (PROXY, ["1.2.3.4, 5.6.7.8, 198.51.100.1"], TRUSTED, "198.51.100.1"),
        (PROXY, ["1.2.3.4", "198.51.100.1"], TRUSTED, "198.51.100.1"),  # the header sent twice
        # Two trusted proxies in a row: past both.
        (PROXY, ["1.2.3.4, 198.51.100.1, 10.1.2.3"], TRUSTED, "198.51.100.1"),
        # A peer that is no trusted proxy writes what it likes: it is the client.
        ("203.0.113.9", ["198.51.100.1"], TRUSTED, "203.0.113.9"),
        # The proxy passed on no header, or something that is no address: the proxy is what is known.
        (PROXY, [], TRUSTED, PROXY),
        (PROXY, ["1.2.3.4, unknown"], TRUSTED, PROXY),
        # Ports, brackets and IPv4 written as IPv6.
        (PROXY, ["198.51.100.1:4711"], TRUSTED, "198.51.100.1"),
        ("::ffff:10.0.0.7", ["::ffff:198.51.100.1"], TRUSTED, "198.51.100.1"),
        # IPv6: one /64 is one client.
        ("2001:db8:1:2:aaaa::1", [], [], "2001:db8:1:2::"),
        ("2001:db8:ffff::1", ["[2001:db8:5:6:7::9]:443"], TRUSTED, "2001:db8:5:6::"),
        (None, ["198.51.100.1"], TRUSTED, "0.0.0.0"),
    ],
)
def test_the_client_is_the_rightmost_address_no_trusted_proxy_wrote(
    peer: str | None, forwarded_for: list[str], trusted: list[str], client: str
) -> None:
    assert client_address(peer, forwarded_for, trusted) == client


def _sign_up_as(client: Client, name: str, forwarded_for: str) -> int:
    data = {"username": name, "email": f"{name}@example.com", "password1": PASSWORD, "password2": PASSWORD}
    client.cookies.clear()
    return client.post(reverse("signup"), data, headers={"X-Forwarded-For": forwarded_for}).status_code


@pytest.mark.services
@pytest.mark.django_db
def test_behind_a_trusted_proxy_each_client_is_counted_under_its_own_address(settings: Any) -> None:
    settings.TRUSTED_PROXIES = TRUSTED
    settings.RATE_LIMIT_SIGNUPS_PER_MINUTE = 2
    through_proxy = Client(REMOTE_ADDR=PROXY)

    # One client rewriting the start of the header each time is still one client.
    spoofing = [_sign_up_as(through_proxy, f"ann{n}", f"192.0.2.{n}, 198.51.100.1") for n in range(3)]
    assert spoofing == [302, 302, 429]
    # Another client behind the same proxy has a count of its own.
    assert _sign_up_as(through_proxy, "ben", "198.51.100.2") == 302


@pytest.mark.services
@pytest.mark.django_db
def test_a_client_that_is_no_trusted_proxy_cannot_choose_its_address(settings: Any) -> None:
    settings.TRUSTED_PROXIES = TRUSTED
    settings.RATE_LIMIT_SIGNUPS_PER_MINUTE = 2
    direct = Client(REMOTE_ADDR="203.0.113.9")

    statuses = [_sign_up_as(direct, f"cat{n}", f"198.51.100.{n}") for n in range(3)]

    assert statuses == [302, 302, 429]


@pytest.mark.services
@pytest.mark.django_db
def test_the_addresses_of_one_ipv6_64_are_counted_together(settings: Any) -> None:
    settings.RATE_LIMIT_SIGNUPS_PER_MINUTE = 2

    statuses = [_sign_up_as(Client(REMOTE_ADDR=f"2001:db8:7:8::{n}"), f"dan{n}", "") for n in range(1, 4)]

    assert statuses == [302, 302, 429]
    assert _sign_up_as(Client(REMOTE_ADDR="2001:db8:7:9::1"), "eve", "") == 302  # the next /64


# --- Live run sockets, counted per address as the pages are ---


def _public_running_run(team: Team) -> int:
    run = make_run(team, status=RunStatus.RUNNING, visibility=Visibility.PUBLIC)
    store_events(run.pk, [("step_started", {"step": 1, "remaining": 4})])
    return run.pk


def _socket(run_id: int, peer: str, forwarded_for: str | None = None) -> WebsocketCommunicator:
    headers = [(b"x-forwarded-for", forwarded_for.encode())] if forwarded_for else []
    socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/runs/{run_id}/", headers=headers)
    socket.scope["client"] = (peer, 50000)  # where daphne says the connection comes from
    socket.scope["user"] = AnonymousUser()
    return socket


async def _opened(socket: WebsocketCommunicator) -> str:
    """'events' for a socket that streams the run, else the message it was closed with."""
    connected, _ = await socket.connect(timeout=10)
    assert connected
    first = await socket.receive_json_from(timeout=10)
    if first["type"] == "event":
        return "events"
    closed = await socket.receive_output(timeout=10)
    assert closed == {"type": "websocket.close", "code": 4429}
    return str(first["message"])


def _open_in_turn(sockets: list[WebsocketCommunicator]) -> list[str]:
    """Open the sockets one after the other, all held open until the last has answered."""

    async def scenario() -> list[str]:
        answers = []
        try:
            for socket in sockets:
                answers.append(await _opened(socket))
        finally:
            for socket in sockets:
                await socket.disconnect()
        return answers

    return async_to_sync(scenario)()


def _network() -> str:
    """A /48 of this test's own, so no other test's sockets count with its."""
    return f"2001:db8:{secrets.randbelow(0xFFFE):x}"


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_live_sockets_from_one_ipv6_64_share_the_per_address_limit(team: Team, settings: Any) -> None:
    settings.RUN_WS_MAX_PER_ADDRESS = 2
    run_id, network = _public_running_run(team), _network()

    answers = _open_in_turn(
        [_socket(run_id, f"{network}:1::{n}") for n in range(1, 4)] + [_socket(run_id, f"{network}:2::1")]
    )

    assert answers[:2] == ["events", "events"]
    assert "Too many live run pages are open from this address (at most 2)" in answers[2]
    assert answers[3] == "events"  # the next /64 is someone else


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_live_sockets_through_a_trusted_proxy_count_per_client_whatever_the_client_writes(
    team: Team, settings: Any
) -> None:
    settings.RUN_WS_MAX_PER_ADDRESS = 1
    settings.TRUSTED_PROXIES = TRUSTED
    run_id, network = _public_running_run(team), _network()
    client, other_client = f"{network}:1::1", f"{network}:2::1"

    answers = _open_in_turn(
        [
            _socket(run_id, PROXY, client),
            _socket(run_id, PROXY, f"192.0.2.1, {client}"),  # the same client, with an address of its choosing first
            _socket(run_id, PROXY, other_client),
        ]
    )

    assert answers == ["events", "Too many live run pages are open from this address (at most 1).", "events"]


class AsyncClientFrom(AsyncClient):
    """Django's ASGI test client, its connection coming from `peer` (as daphne would say in the scope)."""

    def __init__(self, peer: str) -> None:
        super().__init__()
        self.peer = peer

    def _base_scope(self, **request: Any) -> dict[str, Any]:
        scope = super()._base_scope(**request)  # type: ignore[misc]  # Django's, not in its stubs
        return {**scope, "client": [self.peer, 50000]}


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_event_streams_from_one_ipv6_64_share_the_per_address_limit(team: Team, settings: Any) -> None:
    """The API's Server-Sent Events hold the same slots as live sockets, counted the same way."""
    settings.RUN_WS_MAX_PER_ADDRESS = 1
    run_id, network = _public_running_run(team), _network()
    token = token_for(team.member)

    async def scenario() -> list[bytes]:
        streams, firsts = [], []
        try:
            for peer in (f"{network}:1::1", f"{network}:1::2", f"{network}:2::1"):
                client = AsyncClientFrom(peer)
                response = await client.get(
                    f"/api/v1/runs/{run_id}/events/stream", headers={"Authorization": f"Bearer {token}"}
                )
                assert response.status_code == 200
                stream: Any = cast(StreamingHttpResponse, response).streaming_content
                streams.append(stream)
                firsts.append(await anext(aiter(stream)))
        finally:
            for stream in streams:
                await stream.aclose()
        return firsts

    first, same_64, next_64 = async_to_sync(scenario)()

    assert first.startswith(b": stream open")
    assert same_64.startswith(b"event: closing")
    assert b"Too many live run pages are open from this address (at most 1)." in same_64
    assert next_64.startswith(b": stream open")
