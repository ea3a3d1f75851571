"""Backpressure for HTTP response bodies under daphne: a client that stops reading holds the
web process's memory at a few chunks, not at the whole body.

daphne hands each body chunk to Twisted as soon as the application sends it, and Twisted keeps
whatever the client has not taken yet in memory; Django's `send` never waits. A client that
stops reading a 500 MB download (a video, a zip export, an event stream) made the web process
read the whole file into that buffer: 500 MB per stalled client (bench/stalled_readers.py).

Twisted does know when a connection's send buffer is full: it pauses the push producer
registered on the request (the `IConsumer` interface of `twisted.web.http.Request`) and resumes
it once the buffer has drained. This middleware registers one for each HTTP response and makes
`send` wait, after each body chunk, while the connection is paused; Django reads the next chunk
of the file only when the client has taken the previous ones.

It needs daphne's Twisted request behind `send`, which daphne binds as its first argument;
under any other server (or a daphne that binds it otherwise) responses go through unchanged,
and tests/config/test_backpressure.py fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Any

from twisted.internet.interfaces import IPushProducer
from twisted.web.http import Request
from zope.interface import implementer

Scope = dict[str, Any]
Message = dict[str, Any]


@implementer(IPushProducer)
class _Room:
    """Whether the connection's send buffer has room: paused and resumed by Twisted, on its
    reactor, which is daphne's asyncio loop (so an asyncio.Event is safe to set from here)."""

    def __init__(self) -> None:
        self._free = asyncio.Event()
        self._free.set()

    # Twisted's IPushProducer, called on its reactor.
    def pauseProducing(self) -> None:
        self._free.clear()

    def resumeProducing(self) -> None:
        self._free.set()

    def stopProducing(self) -> None:
        self._free.set()  # the connection is going: daphne drops the rest

    async def wait(self) -> None:
        await self._free.wait()


def twisted_request(send: Any) -> Request | None:
    """The Twisted request daphne answers through `send`, or None under another server."""
    if isinstance(send, functools.partial) and send.args and isinstance(send.args[0], Request):
        return send.args[0]
    return None


class BackpressureMiddleware:
    """ASGI middleware: around the whole application, so that `send` is daphne's own."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        request = twisted_request(send) if scope["type"] == "http" else None
        if request is None:
            await self.app(scope, receive, send)
            return
        room = _Room()
        registered = False

        async def send_when_there_is_room(message: Message) -> None:
            nonlocal registered
            body = message["type"] == "http.response.body"
            if message["type"] == "http.response.start" and request.channel is not None and request.producer is None:
                request.registerProducer(room, True)
                registered = True
            elif body and not message.get("more_body", False) and registered:
                # Before the last chunk finishes the request: the next one on this connection registers its own.
                _unregister(request)
                registered = False
            await send(message)
            if body and message.get("more_body", False):
                await room.wait()

        try:
            await self.app(scope, receive, send_when_there_is_room)
        finally:
            if registered:
                _unregister(request)


def _unregister(request: Request) -> None:
    with contextlib.suppress(AttributeError):  # the connection is gone already (its channel is None)
        request.unregisterProducer()
