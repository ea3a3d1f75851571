"""A run's events as Server-Sent Events: `id:` the seq, `event:` the kind, `data:`
the event as JSON; resumed after the `Last-Event-ID` a client sends back (or
`?after=`); comment lines keep idle connections open; the stream ends after the
final event.

An open stream holds a slot like a live websocket does (creations/events/
socket_slots.py), and whether its holder may still see the run, and whether the
token (or browser session) it was opened with still works, is checked again on a
clock, however busy the run (creations/events/watch_guard.py): someone removed
from the workspace, or a revoked token, stops receiving.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.contrib.auth.models import User

from api.tokens import tokens_of
from creations.events.follow import follow_run_events
from creations.events.socket_slots import SocketSlots
from creations.events.watch_guard import WatchGuard, why_not_watching

MEDIA_TYPE = "text/event-stream"


def sse_message(*, data: dict[str, Any], event: str | None = None, event_id: int | None = None) -> bytes:
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if event is not None:
        lines.append(f"event: {event}")
    # JSON never holds a raw newline, so one data line carries the whole event.
    lines.append(f"data: {json.dumps(data, separators=(',', ':'))}")
    return ("\n".join(lines) + "\n\n").encode()


def resume_after(*, last_event_id: str | None, after: int | None) -> int:
    """Where a stream starts: after the last event the client saw (its EventSource sends
    `Last-Event-ID` on reconnect, which wins), else after `?after=`, else from the start."""
    for candidate in (last_event_id, after):
        try:
            return max(0, int(str(candidate).strip()))
        except ValueError:
            continue
    return 0


REVOKED_OR_EXPIRED = "This token no longer works (revoked or expired): the stream ends here."


def _token_works(token_id: int, user_id: int) -> bool:
    return tokens_of(user=User(pk=user_id)).filter(pk=token_id).exists()


_token_works_off_thread = DatabaseSyncToAsync(_token_works, thread_sensitive=False)


@dataclass(frozen=True)
class Watcher:
    """Who holds a stream, and with what: an access token (its id), or a browser session (its key)."""

    user_id: int
    address: str
    token_id: int | None = None
    session_key: str | None = None

    async def why_not(self, run_id: int) -> str | None:
        if self.token_id is not None and not await _token_works_off_thread(self.token_id, self.user_id):
            return REVOKED_OR_EXPIRED
        return await why_not_watching(run_id=run_id, user_id=self.user_id, session_key=self.session_key)


async def run_event_stream(*, run_id: int, after: int, watcher: Watcher, hidden: Sequence[str]) -> AsyncIterator[bytes]:
    """The stream of the run's events for `watcher`, from whom the names `hidden` are hidden."""
    slots = SocketSlots(
        socket_id=f"sse-{run_id}-{watcher.user_id}-{time.monotonic_ns()}",
        user_id=watcher.user_id,
        address=watcher.address,
    )
    refusal = await slots.take()
    if refusal is not None:
        yield sse_message(event="closing", data={"message": refusal.message})
        return
    lost: list[str] = []

    async def note_lost(why: str) -> None:
        lost.append(why)

    try:
        async with WatchGuard(slots=slots, still_allowed=lambda: watcher.why_not(run_id), on_lost=note_lost):
            # Bytes at once: the client (and any proxy) sees the stream open before the first event.
            yield b": stream open\n\n"
            idle = min(settings.API_SSE_KEEPALIVE_SECONDS, settings.RUN_WS_POLL_SECONDS)
            events = follow_run_events(run_id=run_id, after=after, idle_seconds=idle, hidden=hidden)
            async with aclosing(events):
                async for event in events:
                    if lost:
                        yield sse_message(event="closing", data={"message": lost[0]})
                        return
                    if event is None:
                        yield b": keep-alive\n\n"
                    else:
                        yield sse_message(data=event, event=event["kind"], event_id=event["seq"])
    finally:
        await slots.give_back()
