"""Watching a run's live events as a client would, recording each live event's latency
(stored -> received, ms): over the websocket the pages use, and over the API's
Server-Sent Events stream that scripts use. Used by bench/stream.py."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from typing import Any


def _latency(event: dict, connected: float, received: float) -> float | None:
    stored = datetime.fromisoformat(event["at"]).timestamp()
    return (received - stored) * 1000 if stored >= connected else None  # replayed history is not live latency


async def watch_websocket(ws_url: str, origin: str, cookie: str, opened: list[float]) -> list[float]:
    """Latencies of the live events of one run, until the server closes the socket."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    latencies: list[float] = []
    async with connect(ws_url, origin=origin, additional_headers={"Cookie": cookie}, open_timeout=30) as ws:  # type: ignore[arg-type]
        connected = time.time()
        opened.append(connected)
        try:
            async for raw in ws:
                latency = _latency(json.loads(raw), connected, time.time())
                if latency is not None:
                    latencies.append(latency)
        except ConnectionClosed:
            pass
    return latencies


async def watch_sse(stream_url: str, token: str, opened: list[float]) -> list[float]:
    """Latencies of the live events of one run over its event stream, until the server ends it."""
    import httpx
    from httpx_sse import aconnect_sse

    latencies: list[float] = []
    timeout = httpx.Timeout(30, read=120)
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
        aconnect_sse(http, "GET", stream_url) as stream,
    ):
        connected = time.time()
        opened.append(connected)
        async for message in stream.aiter_sse():
            if not message.data:
                print(f"SSE message without data: event={message.event!r} id={message.id!r}", flush=True)
                continue
            latency = _latency(json.loads(message.data), connected, time.time())
            if latency is not None:
                latencies.append(latency)
    return latencies


async def watch_runs(server: Any, run_ids: list[int], *, cookie: str, token: str) -> tuple[list[float], list[float]]:
    """Each run over the websocket and over the event stream at once: (websocket, SSE) latencies."""
    opened: list[float] = []
    # One watcher failing (say, refused with 429) cancels the others, which close their connections and
    # give their slots back: the next phase starts with none of this one's watchers left open.
    async with asyncio.TaskGroup() as group:
        sockets = [
            group.create_task(watch_websocket(server.ws_url(f"/ws/runs/{rid}/"), server.origin, cookie, opened))
            for rid in run_ids
        ]
        streams = [
            group.create_task(
                watch_sse(f"http://localhost:{server.port}/api/v1/runs/{rid}/events/stream", token, opened)
            )
            for rid in run_ids
        ]
    return [x for task in sockets for x in task.result()], [x for task in streams for x in task.result()]
