"""Following a run's events from outside the websocket: a page of stored events, and
an async iterator that yields every event once, in order, live, until the final one.

The database is the source of truth; the channel layer's announcements ("events up
to seq N", creations/events/announce.py) only say when to look. The follower joins
the run's group before its first read, so nothing stored in between is missed; an
announcement whose inline events continue exactly where it is is used as is (no
read: each would cost every open stream two queries per event), one of events it
has sent already is dropped, any other sends it to the database; and with no
announcement for a while it reads the database anyway (an announcement may be lost)
and yields None, so its consumer can send a keep-alive or check that the person may
still watch.

One receive from the layer stays pending for the follower's whole life, as a Channels consumer's
does. A receive cancelled at each quiet spell would make the Pub/Sub layer unsubscribe the
follower's channel and subscribe it again (Redis round trips under the layer's one lock, for every
open stream, every few seconds), drop announcements that arrive in between, and hold the stream
until the layer's clean-up returned: a layer that hung there silenced the stream, keep-alives and
all. For the same reason the follower lets go of the layer within a bound when it ends.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from channels.db import DatabaseSyncToAsync
from channels.layers import BaseChannelLayer, get_channel_layer
from django.conf import settings

from creations.events.announce import run_group
from creations.events.redaction import event_shown
from creations.events.store import event_wire
from creations.models import Run, RunEvent

log = logging.getLogger(__name__)

# How long an ended follower waits for the layer to let go of its channel and group; past it,
# the layer finishes (or not) on its own task while the stream closes.
LET_GO_SECONDS = 2.0
# Receives started to drop the channel that each found a message instead, at most.
_CLOSE_TRIES = 10


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


class _Inbox:
    """The follower's channel on the layer, with at most one receive pending at a time."""

    def __init__(self, layer: BaseChannelLayer, channel: str) -> None:
        self._layer = layer
        self._channel = channel
        self._pending: asyncio.Future[dict[str, Any]] | None = None

    async def next(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None after `timeout` (the receive stays pending for the next call)."""
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._layer.receive(self._channel))
        done, _ = await asyncio.wait({self._pending}, timeout=timeout)
        if not done:
            return None
        received, self._pending = self._pending, None
        return received.result()

    async def close(self) -> None:
        """Drop the channel. The Pub/Sub layer does so when a receive that has started waiting is
        cancelled; one cancelled before its first step, or one that finds a message, drops nothing."""
        for _ in range(_CLOSE_TRIES):
            if self._pending is None:
                self._pending = asyncio.ensure_future(self._layer.receive(self._channel))
                await asyncio.sleep(0)  # its first step: waiting, or done with a message already there
            if not self._pending.done():
                self._pending.cancel()
                await asyncio.wait({self._pending})
                return
            if not self._pending.cancelled():
                self._pending.exception()  # retrieved: a message (or error) for a follower that has ended
            self._pending = None


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
    inbox = _Inbox(layer, channel)
    sent = after
    read = True  # from the database before the next announcement: at the start, after a gap or a quiet spell
    try:
        while True:
            if read:
                page = await _events_page(run_id=run_id, after=sent, limit=settings.RUN_WS_REPLAY_PAGE, hidden=hidden)
                for event in page.events:
                    yield event
                    sent = event["seq"]
                if len(page.events) == settings.RUN_WS_REPLAY_PAGE:
                    continue
                if page.is_final and sent >= page.last_seq:
                    return
            message = await inbox.next(timeout=idle_seconds)
            if message is None:
                yield None
                read = True
                continue
            last_seq = int(message.get("last_seq", 0))
            inline = [e for e in message.get("events") or [] if e["seq"] > sent]
            if inline and inline[0]["seq"] == sent + 1 and inline[-1]["seq"] == last_seq:
                for event in inline:
                    yield event_shown(event, hidden)
                    sent = event["seq"]
                if _is_final_event(inline[-1]):
                    return
            # Announced events applied, or nothing new: no read until the next announcement says more.
            read = last_seq > sent
    finally:
        await _let_go(inbox.close(), layer.group_discard(group, channel))


async def _let_go(*steps: Coroutine[Any, Any, None]) -> None:
    """Leave the layer, waiting at most LET_GO_SECONDS: past it the steps go on (or hang) on tasks
    of their own while the stream ends; the layer's connection takes the rest along when it closes."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    done, pending = await asyncio.wait(tasks, timeout=LET_GO_SECONDS)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            log.warning("Run events: the channel layer failed letting go of a follower", exc_info=task.exception())
    if pending:
        log.warning("Run events: the channel layer did not let go of a follower within %s s", LET_GO_SECONDS)
