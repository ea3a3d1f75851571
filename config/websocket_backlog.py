"""A bound on what a websocket client leaves unread: past it the socket is closed, saying why.

daphne writes each message the application sends straight into Twisted's buffer for the
connection, and Twisted keeps whatever the client has not taken yet in memory, without limit.
A client that opens a chatty run's live page and stops reading (a stalled tab, or someone doing
it on purpose, many times over) made the web process hold every event of the run for it.

HTTP bodies wait for the client instead (config/backpressure.py); a websocket cannot simply
wait, since the events keep coming behind it. So: Twisted pauses the connection's producer once
its buffer holds more than 64 KB, and resumes it when the buffer has drained. This middleware
registers a producer for each websocket and counts the bytes the application sends while the
connection is paused. Past RUN_WS_SEND_BUFFER_MAX_BYTES, `send` waits for the buffer to drain
(a client that reads but got a burst, such as a replay page, catches up here); if it has not
drained within DRAIN_GRACE_SECONDS, the socket is closed with CLOSE_TOO_FAR_BEHIND and a reason,
the client gets nothing more, and each later send raises an OSError (as ASGI has a server do on a
closed connection), so the application stops at once instead of working on for nobody. Autobahn
drops a connection whose client does not answer the close within a second, which frees the
buffer; the consumer gets its disconnect and gives its slot back (creations/events/socket_slots.py).
The page's script reconnects from the last event it showed (static/js/run_stream.js).

Like config/backpressure.py it needs daphne's protocol behind `send`; under any other server the
socket goes through unchanged, and tests/config/test_backpressure.py fails.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from autobahn.twisted.websocket import WebSocketServerProtocol
from django.conf import settings
from twisted.internet.interfaces import IPushProducer
from zope.interface import implementer

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Message = dict[str, Any]

CLOSE_TOO_FAR_BEHIND = 4408
REASON_TOO_FAR_BEHIND = "This page fell too far behind the live events; reload it to catch up."
# How long a client past the bound has to take what is waiting before it is closed: a replay page
# of big events reaches a reader on an ordinary link well within it.
DRAIN_GRACE_SECONDS = 5.0


class SocketClosedBehind(OSError):
    """Raised by `send` on a socket this middleware closed, as ASGI asks of a server sending on a
    closed connection: the application learns it at once, before daphne's disconnect reaches it."""


@implementer(IPushProducer)
class _Backlog:
    """Whether the connection's buffer is over Twisted's watermark, and what was sent since it went
    over. Paused and resumed by Twisted on its reactor (daphne's asyncio loop). Passes each call
    on to the producer the connection had before (daphne's HTTP channel, which stops reading the
    socket while the buffer is full)."""

    def __init__(self, before: Any) -> None:
        self._before = before
        self._drained = asyncio.Event()
        self._drained.set()
        self.unsent_past_watermark = 0
        self.stopped = False

    @property
    def paused(self) -> bool:
        return not self._drained.is_set()

    def sent(self, size: int) -> None:
        if self.paused:
            self.unsent_past_watermark += size

    # Twisted's IPushProducer: pauseProducing comes on every write while the buffer is full.
    def pauseProducing(self) -> None:
        self._drained.clear()
        if self._before is not None:
            self._before.pauseProducing()

    def resumeProducing(self) -> None:
        self.unsent_past_watermark = 0
        self._drained.set()
        if self._before is not None:
            self._before.resumeProducing()

    def stopProducing(self) -> None:
        self.stopped = True
        self._drained.set()
        if self._before is not None:
            self._before.stopProducing()

    async def drained_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self._drained.wait(), seconds)
        except TimeoutError:
            return False
        return True


def daphne_websocket(send: Any) -> WebSocketServerProtocol | None:
    """The websocket protocol daphne answers through `send`, or None under another server."""
    if (
        isinstance(send, functools.partial)
        and send.args
        and isinstance(send.args[0], WebSocketServerProtocol)
        and hasattr(send.args[0].transport, "producer")
    ):
        return send.args[0]
    return None


def _size(message: Message) -> int:
    if message.get("bytes") is not None:
        return len(message["bytes"])
    return len((message.get("text") or "").encode())


class WebsocketBacklogMiddleware:
    """ASGI middleware: around the whole application, so that `send` is daphne's own."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        protocol = daphne_websocket(send) if scope["type"] == "websocket" else None
        if protocol is None:
            await self.app(scope, receive, send)
            return
        bound = settings.RUN_WS_SEND_BUFFER_MAX_BYTES
        backlog: _Backlog | None = None
        closed = False

        async def send_within_bound(message: Message) -> None:
            nonlocal backlog, closed
            if closed:
                if message["type"] == "websocket.send":
                    raise SocketClosedBehind("the client fell too far behind; the socket is closed")
                return  # a close of a closed socket
            if message["type"] == "websocket.accept" and backlog is None:
                backlog = _register(protocol)
            if message["type"] == "websocket.send" and backlog is not None:
                # Checked before this message goes in: the buffer holds at most the bound and one message.
                if backlog.unsent_past_watermark > bound and not await backlog.drained_within(DRAIN_GRACE_SECONDS):
                    if not closed:  # another task's send may have closed it meanwhile
                        closed = True
                        log.info("Closed a websocket whose client left over %d bytes unread (%s)", bound, scope["path"])
                        protocol.sendClose(code=CLOSE_TOO_FAR_BEHIND, reason=REASON_TOO_FAR_BEHIND)
                    raise SocketClosedBehind("the client fell too far behind; the socket is closed")
                backlog.sent(_size(message))
            await send(message)

        await self.app(scope, receive, send_within_bound)


def _register(protocol: WebSocketServerProtocol) -> _Backlog:
    """Put a _Backlog in front of whatever producer the connection has (the HTTP channel it was
    upgraded from), so Twisted tells it when the buffer fills and drains."""
    transport: Any = protocol.transport  # Twisted's TCP transport: an IConsumer, with its producer
    before = transport.producer
    if before is not None:
        transport.unregisterProducer()
    backlog = _Backlog(before)  # stays registered for the connection's life
    transport.registerProducer(backlog, True)
    return backlog
