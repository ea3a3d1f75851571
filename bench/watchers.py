"""Watching a run's live events as a client would, recording each live event's latency
(stored -> received, ms): over the websocket the pages use, and over the API's
Server-Sent Events stream that scripts use. Used by bench/stream.py.

Beside them, a listener of the bench's own on the runs' channel layer (as daphne's consumers
listen) records when each announcement arrives: the worker's part of the path (its commit, its
announcing thread, Redis) apart from the web tier's (daphne, the socket, the client)."""

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


async def listen_to_announcements(run_id: int, latencies: list[float]) -> None:
    """Adds to `latencies` each live event of one run as its announcement reaches a listener on the
    channel layer, until cancelled. Announcements without their events inline (too large) count nothing."""
    from channels.layers import get_channel_layer
    from django.conf import settings

    from creations.events.announce import run_group

    layer = get_channel_layer(settings.RUN_CHANNEL_LAYER)
    assert layer is not None
    channel = await layer.new_channel()
    await layer.group_add(run_group(run_id), channel)
    listening = time.time()
    try:
        while True:
            message = await layer.receive(channel)
            heard = time.time()
            for event in message.get("events") or []:
                latency = _latency(event, listening, heard)
                if latency is not None:
                    latencies.append(latency)
    finally:
        await layer.group_discard(run_group(run_id), channel)


LAG_TICK_SECONDS = 0.005


async def measure_loop_lag(lags: list[float]) -> None:
    """Adds to `lags` how late (ms) each short sleep of this event loop wakes, until cancelled: the
    share of a latency that is this process's own loop, busy with the other watchers, not the platform."""
    loop = asyncio.get_running_loop()
    while True:
        asleep = loop.time()
        await asyncio.sleep(LAG_TICK_SECONDS)
        lags.append((loop.time() - asleep - LAG_TICK_SECONDS) * 1000)


async def watch_runs(
    server: Any,
    run_ids: list[int],
    *,
    cookie: str,
    token: str,
    announced: list[float] | None = None,
    loop_lag: list[float] | None = None,
) -> tuple[list[float], list[float]]:
    """Each run over the websocket and over the event stream at once: (websocket, SSE) latencies; with
    `announced`, also each announcement's as the channel layer delivers it, added there; with
    `loop_lag`, how late this process's event loop was meanwhile (`measure_loop_lag`)."""
    listeners = (
        [asyncio.ensure_future(listen_to_announcements(rid, announced)) for rid in run_ids]
        if announced is not None
        else []
    )
    if loop_lag is not None:
        listeners.append(asyncio.ensure_future(measure_loop_lag(loop_lag)))
    try:
        return await _watch(server, run_ids, cookie=cookie, token=token)
    finally:
        for listener in listeners:
            listener.cancel()
        await asyncio.gather(*listeners, return_exceptions=True)


async def _watch(server: Any, run_ids: list[int], *, cookie: str, token: str) -> tuple[list[float], list[float]]:
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
