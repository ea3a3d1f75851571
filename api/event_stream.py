"""A run's events as Server-Sent Events: `id:` the seq, `event:` the kind, `data:`
the event as JSON; resumed after the `Last-Event-ID` a client sends back (or
`?after=`); comment lines keep idle connections open; the stream ends after the
final event.

An open stream holds a slot like a live websocket does (creations/events/
socket_slots.py), and whether its holder may still see the run is checked again
every so often: someone removed from the workspace stops receiving.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.contrib.auth.models import User

from creations.access import can_view_creation
from creations.events.follow import follow_run_events
from creations.events.socket_slots import SocketSlots
from creations.models import Run

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


def _may_still_view(run_id: int, user_id: int) -> bool:
    run = Run.objects.select_related("creation").filter(pk=run_id).first()
    user = User.objects.filter(pk=user_id, is_active=True).first()
    return run is not None and user is not None and can_view_creation(creation=run.creation, user=user)


_may_still_view_async = DatabaseSyncToAsync(_may_still_view, thread_sensitive=False)


async def run_event_stream(*, run_id: int, after: int, user_id: int, address: str) -> AsyncIterator[bytes]:
    slots = SocketSlots(socket_id=f"sse-{run_id}-{user_id}-{time.monotonic_ns()}", user_id=user_id, address=address)
    refusal = await slots.take()
    if refusal is not None:
        yield sse_message(event="closing", data={"message": refusal.message})
        return
    try:
        # Bytes at once: the client (and any proxy) sees the stream open before the first event.
        yield b": stream open\n\n"
        checked_at = time.monotonic()
        idle = min(settings.API_SSE_KEEPALIVE_SECONDS, settings.RUN_WS_POLL_SECONDS)
        async for event in follow_run_events(run_id=run_id, after=after, idle_seconds=idle):
            if event is not None:
                yield sse_message(data=event, event=event["kind"], event_id=event["seq"])
                continue
            yield b": keep-alive\n\n"
            await slots.refresh()
            if time.monotonic() - checked_at >= settings.RUN_WS_ACCESS_RECHECK_SECONDS:
                checked_at = time.monotonic()
                if not await _may_still_view_async(run_id, user_id):
                    yield sse_message(event="closing", data={"message": "You can no longer see this run."})
                    return
    finally:
        await slots.give_back()
