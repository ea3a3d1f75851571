"""What a websocket's client may leave unread (config/websocket_backlog.py), with daphne's protocol and
Twisted's transport stood in for: the transport pauses and resumes the producer the middleware registers
as a real one does. The real thing, a daphne and a client that stops reading, is in test_backpressure.py."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from autobahn.twisted.websocket import WebSocketServerProtocol

from config import websocket_backlog
from config.websocket_backlog import CLOSE_TOO_FAR_BEHIND, REASON_TOO_FAR_BEHIND, WebsocketBacklogMiddleware

BOUND = 100_000
MESSAGE = "x" * 10_000


class Transport:
    """Twisted's part: a producer slot, and the one already there (daphne's HTTP channel)."""

    def __init__(self) -> None:
        self.channel = Producer()
        self.producer: Any = self.channel

    def registerProducer(self, producer: Any, streaming: bool) -> None:
        assert self.producer is None
        assert streaming
        self.producer = producer

    def unregisterProducer(self) -> None:
        self.producer = None


class Producer:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def pauseProducing(self) -> None:
        self.calls.append("pause")

    def resumeProducing(self) -> None:
        self.calls.append("resume")

    def stopProducing(self) -> None:
        self.calls.append("stop")


class Protocol(WebSocketServerProtocol):
    def __init__(self) -> None:
        super().__init__()
        self.fake = Transport()
        self.transport = self.fake  # type: ignore[assignment]  # a stand-in for Twisted's
        self.closes: list[tuple[int | None, str | None]] = []
        self.delivered: list[dict[str, Any]] = []

    def sendClose(self, code: int | None = None, reason: str | None = None) -> None:
        self.closes.append((code, reason))


async def daphne_reply(protocol: Protocol, message: dict[str, Any]) -> None:
    protocol.delivered.append(message)


Scenario = Callable[[Callable[[dict[str, Any]], Awaitable[None]], Protocol], Awaitable[None]]


def serve(scenario: Scenario) -> Protocol:
    """Run an application that accepts, then does `scenario(send, protocol)`, behind the middleware."""
    protocol = Protocol()

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "websocket.accept"})
        await scenario(send, protocol)

    middleware = WebsocketBacklogMiddleware(application)
    send = functools.partial(daphne_reply, protocol)
    asyncio.run(middleware({"type": "websocket", "path": "/ws/runs/1/"}, None, send))
    return protocol


@pytest.fixture(autouse=True)
def small_bound(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.RUN_WS_SEND_BUFFER_MAX_BYTES = BOUND
    monkeypatch.setattr(websocket_backlog, "DRAIN_GRACE_SECONDS", 0.2)


def text(n: int) -> dict[str, Any]:
    return {"type": "websocket.send", "text": f"{n:05d}{MESSAGE}"}


def sent_texts(protocol: Protocol) -> list[str]:
    return [m["text"][:5] for m in protocol.delivered if m["type"] == "websocket.send"]


def test_a_client_that_keeps_up_gets_everything_however_much() -> None:
    async def chatty(send: Any, protocol: Protocol) -> None:
        for n in range(100):  # 1 MB: ten times the bound, the buffer never full for long
            await send(text(n))
            if n % 5 == 4:  # the buffer passes Twisted's watermark, then drains
                protocol.fake.producer.pauseProducing()
                protocol.fake.producer.resumeProducing()
        await send({"type": "websocket.close", "code": 1000})

    protocol = serve(chatty)
    assert sent_texts(protocol) == [f"{n:05d}" for n in range(100)]
    assert protocol.delivered[-1] == {"type": "websocket.close", "code": 1000}
    assert protocol.closes == []


def test_a_client_that_stops_reading_is_closed_saying_why_once_past_the_bound() -> None:
    refused: list[int] = []

    async def stalled(send: Any, protocol: Protocol) -> None:
        protocol.fake.producer.pauseProducing()  # the client stopped reading: the buffer stays full
        for n in range(30):
            try:
                await send(text(n))
            except OSError:  # as ASGI has a server say the connection is closed
                refused.append(n)
        await send({"type": "websocket.close", "code": 1000})

    protocol = serve(stalled)
    # Ten messages of 10,005 bytes went out, the tenth crossing the bound; then nothing more, a close included.
    assert sent_texts(protocol) == [f"{n:05d}" for n in range(10)]
    assert protocol.delivered[-1]["type"] == "websocket.send"
    assert protocol.closes == [(CLOSE_TOO_FAR_BEHIND, REASON_TOO_FAR_BEHIND)]
    assert refused == list(range(10, 30))


def test_a_reader_past_the_bound_that_catches_up_within_the_grace_stays() -> None:
    async def burst(send: Any, protocol: Protocol) -> None:
        producer = protocol.fake.producer
        producer.pauseProducing()
        asyncio.get_running_loop().call_later(0.05, producer.resumeProducing)  # the client takes it all
        for n in range(30):
            await send(text(n))

    protocol = serve(burst)
    assert sent_texts(protocol) == [f"{n:05d}" for n in range(30)]
    assert protocol.closes == []


def test_the_connection_still_tells_daphnes_own_producer() -> None:
    async def fill_and_drain(send: Any, protocol: Protocol) -> None:
        protocol.fake.producer.pauseProducing()
        protocol.fake.producer.resumeProducing()
        protocol.fake.producer.stopProducing()

    protocol = serve(fill_and_drain)
    assert protocol.fake.channel.calls == ["pause", "resume", "stop"]


def test_under_another_server_the_socket_goes_through_unchanged() -> None:
    delivered: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        delivered.append(message)

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        for n in range(30):
            await send(text(n))

    asyncio.run(WebsocketBacklogMiddleware(application)({"type": "websocket", "path": "/"}, None, send))
    assert len(delivered) == 30
