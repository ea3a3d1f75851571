"""Following a run's events from outside the websocket: a page of stored events, and
an async iterator that yields every event once, in order, live, until the final one.

The database is the source of truth; the channel layer's announcements ("events up
to seq N", creations/events/announce.py) only say when to look. The follower joins
the run's group before its first read, so nothing stored in between is missed; an
announcement whose inline events continue exactly where it is is used as is, any
other sends it to the database; and with no announcement for a while it reads the
database anyway (an announcement may be lost) and yields None, so its consumer can
send a keep-alive or check that the person may still watch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any

from channels.db import DatabaseSyncToAsync
from channels.layers import get_channel_layer
from django.conf import settings

from creations.events.announce import run_group
from creations.events.redaction import event_shown
from creations.events.store import event_wire
from creations.models import Run, RunEvent


@dataclass(frozen=True)
class EventsPage:
    events: list[dict[str, Any]]
    is_final: bool  # the run has ended
    last_seq: int  # the run's highest stored seq


def events_page(*, run_id: int, after: int, limit: int, hidden: Sequence[str]) -> EventsPage:
    """Stored events of a run after `after`, at most `limit`, oldest first, told to a reader from
    whom the names `hidden` are hidden (creations.events.redaction)."""
    run = Run.objects.only("status", "last_seq").get(pk=run_id)
    rows = RunEvent.objects.filter(run_id=run_id, seq__gt=after).order_by("seq")[:limit]
    events = [event_shown(event_wire(e), hidden) for e in rows]
    return EventsPage(events=events, is_final=run.is_final, last_seq=run.last_seq)


# Reads run in a pool of threads: one shared thread would make every follower wait in one line.
_events_page = DatabaseSyncToAsync(events_page, thread_sensitive=False)


def _is_final_event(event: dict[str, Any]) -> bool:
    return bool(event["kind"] == "status" and event["payload"].get("final"))


async def follow_run_events(
    *, run_id: int, after: int, idle_seconds: float, hidden: Sequence[str]
) -> AsyncGenerator[dict[str, Any] | None]:
    """Every event of the run after `after`, in order, each once, then live ones, ending
    after the final one, told to a reader from whom the names `hidden` are hidden.
    Yields None after `idle_seconds` without news."""
    layer = get_channel_layer(settings.RUN_CHANNEL_LAYER)
    assert layer is not None
    channel = await layer.new_channel()
    group = run_group(run_id)
    await layer.group_add(group, channel)
    sent = after
    try:
        while True:
            page = await _events_page(run_id=run_id, after=sent, limit=settings.RUN_WS_REPLAY_PAGE, hidden=hidden)
            for event in page.events:
                yield event
                sent = event["seq"]
            if len(page.events) == settings.RUN_WS_REPLAY_PAGE:
                continue
            if page.is_final and sent >= page.last_seq:
                return
            try:
                message = await asyncio.wait_for(layer.receive(channel), timeout=idle_seconds)
            except TimeoutError:
                yield None
                continue
            inline = [e for e in message.get("events") or [] if e["seq"] > sent]
            if inline and inline[0]["seq"] == sent + 1 and inline[-1]["seq"] == int(message.get("last_seq", 0)):
                for event in inline:
                    yield event_shown(event, hidden)
                    sent = event["seq"]
                if _is_final_event(inline[-1]):
                    return
    finally:
        with contextlib.suppress(Exception):  # the layer may be away; the group entry expires anyway
            await layer.group_discard(group, channel)
