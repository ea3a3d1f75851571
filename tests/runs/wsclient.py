"""A websocket client for run streams, as a browser tab would use it (session cookie, Origin)."""

from __future__ import annotations

import json
import time
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

from tests.fixtures_runs import AtelierServer


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
