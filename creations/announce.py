"""Telling open websockets that a run has new events, through the channel layer.

An announcement only says "events up to seq N exist" (with a small inline
batch so the common case needs no database read). It may be lost — Redis
restarts, channel capacity — and that is fine: consumers fill gaps from the
database, which is the only copy that matters.

Sync code (the Celery worker) announces through one asyncio loop per process
running in a daemon thread, so the channel layer keeps one connection pool and
the agent loop never waits on Redis.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings

log = logging.getLogger(__name__)

MESSAGE_TYPE = "run.events"  # handled by RunEventsConsumer.run_events


def run_group(run_id: int) -> str:
    return f"run-{run_id}"


def announcement(*, last_seq: int, events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The channel-layer message: the highest stored seq, and the events inline when they are small."""
    inline: list[dict[str, Any]] = []
    budget = settings.RUN_ANNOUNCE_INLINE_MAX_BYTES
    size = 0
    for event in events:
        size += len(json.dumps(event["payload"])) + 64
        if size > budget:
            inline = []  # all or nothing: the consumer reads the rest from the database
            break
        inline.append(event)
    return {"type": MESSAGE_TYPE, "last_seq": last_seq, "events": inline}


class _Announcer:
    """One event loop thread per process that sends announcements one after
    another, in the order they were made (so inline batches arrive in seq order)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]]] | None = None
        self._pid: int | None = None

    def _ensure_loop(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Queue[tuple[str, dict[str, Any]]]]:
        with self._lock:
            # A forked child (Celery prefork) must not reuse its parent's loop thread.
            if self._loop is None or self._queue is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
                threading.Thread(target=loop.run_forever, name="run-announcer", daemon=True).start()
                asyncio.run_coroutine_threadsafe(_send_forever(queue), loop)
                self._loop, self._queue, self._pid = loop, queue, os.getpid()
            return self._loop, self._queue

    def send(self, run_id: int, message: dict[str, Any]) -> None:
        loop, queue = self._ensure_loop()
        loop.call_soon_threadsafe(queue.put_nowait, (run_group(run_id), message))


async def _send_forever(queue: asyncio.Queue[tuple[str, dict[str, Any]]]) -> None:
    while True:
        group, message = await queue.get()
        try:
            await _group_send(group, message)
        except Exception as error:  # Redis down: the database still has the events
            log.warning("Could not announce run events (the database still has them): %s", error)


async def _group_send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    await layer.group_send(group, message)


_announcer = _Announcer()


def announce(run_id: int, *, last_seq: int, events: Sequence[dict[str, Any]] = ()) -> None:
    """Announce stored events; returns at once (the send happens on the announcer thread)."""
    _announcer.send(run_id, announcement(last_seq=last_seq, events=events))
