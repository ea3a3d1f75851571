"""Telling open websockets that a run has new events, through the channel layer.

An announcement only says "events up to seq N exist" (with a small inline
batch so the common case needs no database read). It may be lost — Redis
restarts, channel capacity — and that is fine: consumers fill gaps from the
database, which is the only copy that matters.

Sync code (the Celery worker) announces through one asyncio loop per process
running in a daemon thread, so the channel layer keeps one connection pool and
the agent loop never waits on Redis. Runs are announced concurrently (one run's
slow send does not hold up the others), each run's announcements in order, and
what piles up for a run while its previous send is on the way goes out as ONE
merged message: under load there are fewer, larger messages instead of a queue.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings

from sandboxes.per_process import per_process

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


@dataclass
class _Batch:
    """What is waiting to be announced for one run (merged announcements)."""

    last_seq: int = 0
    events: dict[int, dict[str, Any]] = field(default_factory=dict)

    def add(self, last_seq: int, events: Sequence[dict[str, Any]]) -> None:
        self.last_seq = max(self.last_seq, last_seq)
        for event in events:
            self.events[event["seq"]] = event

    def message(self) -> dict[str, Any]:
        # Two threads of a run may announce out of commit order: send in seq order.
        return announcement(last_seq=self.last_seq, events=[self.events[seq] for seq in sorted(self.events)])


class _Announcer:
    """The announcer loop of this process (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: dict[int, _Batch] = {}  # run id -> not sent yet
        self._sending: set[int] = set()  # runs with a sender task on the loop
        self._failing = False

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="run-announcer", daemon=True).start()
            self._loop = loop
        return self._loop

    def send(self, run_id: int, *, last_seq: int, events: Sequence[dict[str, Any]]) -> None:
        with self._lock:
            loop = self._ensure_loop()
            self._waiting.setdefault(run_id, _Batch()).add(last_seq, events)
            if run_id in self._sending:
                return  # its sender picks this up right after the send on the way
            self._sending.add(run_id)
        asyncio.run_coroutine_threadsafe(self._send_run(run_id), loop)

    def _take(self, run_id: int) -> _Batch | None:
        with self._lock:
            batch = self._waiting.pop(run_id, None)
            if batch is None:
                self._sending.discard(run_id)
            return batch

    async def _send_run(self, run_id: int) -> None:
        while (batch := self._take(run_id)) is not None:
            try:
                await _group_send(run_group(run_id), batch.message())
            except Exception as error:  # Redis down: the database still has the events
                if not self._failing:
                    log.warning("Could not announce run events (the database still has them): %s", error)
                self._failing = True
            else:
                if self._failing:
                    log.warning("Announcing run events works again.")
                self._failing = False


async def _group_send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer(settings.RUN_CHANNEL_LAYER)
    if layer is None:
        return
    await layer.group_send(group, message)


@per_process
def _announcer() -> _Announcer:
    """This process's announcer: a forked child (Celery prefork) must not use its parent's loop thread."""
    return _Announcer()


def announce(run_id: int, *, last_seq: int, events: Sequence[dict[str, Any]] = ()) -> None:
    """Announce stored events; returns at once (the send happens on the announcer thread)."""
    _announcer().send(run_id, last_seq=last_seq, events=events)
