"""A websocket client for run streams, as a browser tab would use it (session cookie, Origin)."""

from __future__ import annotations

import json
import time
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

from devstack.stack import AtelierServer


def open_stream(server: AtelierServer, run_id: int, *, after: int = 0, cookie: str | None = None) -> ClientConnection:
    headers = {"Cookie": cookie} if cookie else {}
    return connect(
        server.ws_url(f"/ws/runs/{run_id}/?after={after}"),
        origin=Origin(server.origin),
        additional_headers=headers,
        open_timeout=10,
    )


def read_events(
    ws: ClientConnection, *, until_seq: int | None = None, timeout: float = 60
) -> tuple[list[dict[str, Any]], bool]:
    """Events until `until_seq`, or until the server closes; returns (events, closed_by_server)."""
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            raw = ws.recv(timeout=max(0.1, deadline - time.monotonic()))
        except ConnectionClosed:
            return events, True
        except TimeoutError:
            break
        message = json.loads(raw)
        assert message["type"] == "event"
        events.append(message)
        if until_seq is not None and message["seq"] >= until_seq:
            break
    return events, False


def follow_stream(
    server: AtelierServer, run_id: int, *, cookie: str | None = None, timeout: float = 120
) -> tuple[list[dict[str, Any]], int]:
    """Watch a run as static/js/run_stream.js does: on any drop, reconnect (with a
    short backoff) resuming after the last seq received, until the server ends the
    stream with code 1000. Returns (events, reconnections)."""
    events: list[dict[str, Any]] = []
    reconnections = -1
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reconnections += 1
        after = events[-1]["seq"] if events else 0
        try:
            with open_stream(server, run_id, after=after, cookie=cookie) as ws:
                while True:
                    events.append(json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic()))))
        except ConnectionClosed as closed:
            if closed.rcvd is not None and closed.rcvd.code == 1000:
                return events, reconnections
        except (OSError, InvalidHandshake, TimeoutError):
            pass  # the server refused or dropped the handshake meanwhile: try again
        time.sleep(0.3)
    raise AssertionError(f"run {run_id}: the stream did not end in {timeout} s; got {len(events)} events")
