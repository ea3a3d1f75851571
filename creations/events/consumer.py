"""The live trajectory of a run over a websocket: /ws/runs/<id>/?after=N.

The database is the source of truth. On connect the consumer joins the run's
group first, then replays stored events after N, so nothing stored between
the replay and the subscription is missed. Announcements ("events up to seq
M", maybe with the events inline) are applied only in order: anything already
sent is dropped, and a gap is filled from the database. A slow periodic check
covers announcements lost on the way (Redis restarts). When the run has
ended, its final event is sent and the socket is closed (code 1000).

Messages to the client: {"type": "event", "seq", "kind", "payload", "at"};
{"type": "closing", "message"} before the server closes for a reason the
person should read: too many sockets open (4429, socket_slots.py), or access
lost while watching (4403): removed from the workspace, the creation made private,
signed out. Checked again every RUN_WS_ACCESS_RECHECK_SECONDS on a clock of its
own, however busy the run (watch_guard.py, shared with the API's event stream).
A client that leaves too much unread is closed by the server (4408, with a reason
in the close frame: config/websocket_backlog.py); the page reconnects from the
last event it showed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ParamSpec, TypeVar
from urllib.parse import parse_qs

from channels.db import DatabaseSyncToAsync
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from config.client_address import address_of_scope
from creations.access import can_view_creation
from creations.events.announce import MESSAGE_TYPE as ANNOUNCEMENT
from creations.events.announce import run_group
from creations.events.follow import events_page
from creations.events.redaction import event_shown
from creations.events.socket_slots import SocketSlots
from creations.events.watch_guard import WatchGuard, why_not_watching
from creations.models import Run

log = logging.getLogger(__name__)

CLOSE_FORBIDDEN = 4403  # sent before accept, daphne turns it into an HTTP 403 at the handshake
CLOSE_NOT_FOUND = 4404
CLOSE_TOO_MANY = 4429
P = ParamSpec("P")
R = TypeVar("R")
# The names a person may not be told in a run's events (its model's, while a blind comparison
# hides it from them: the arena's rule, which config.routing hands the consumer, as this layer
# sits below the arena).
NamesHidden = Callable[[Run, Any], Sequence[str]]


# Reads run in a pool of threads (thread_sensitive=False): with the default
# single shared thread, every open websocket's queries would wait in one line.
# They are plain reads in autocommit, so any thread will do.
def _off_thread(func: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    return DatabaseSyncToAsync(func, thread_sensitive=False)


def _names_hidden_if_viewable(run_id: int, user: Any, names_hidden: NamesHidden) -> Sequence[str] | None:
    """The names the run's events must not tell `user`; None when they may not watch the run."""
    run = Run.objects.select_related("creation__model_endpoint", "creation__contestant").filter(pk=run_id).first()
    if run is None or not can_view_creation(creation=run.creation, user=user):
        return None
    return tuple(names_hidden(run, user))


_load_run_for = _off_thread(_names_hidden_if_viewable)


@_off_thread
def _events_after(run_id: int, after: int, limit: int, hidden: Sequence[str]) -> tuple[list[dict[str, Any]], bool, int]:
    """Stored events after `after` (one page), whether the run is final, and its last_seq."""
    page = events_page(run_id=run_id, after=after, limit=limit, hidden=hidden)
    return page.events, page.is_final, page.last_seq


def _parse_after(query_string: bytes) -> int:
    values = parse_qs(query_string.decode("latin-1")).get("after", ["0"])
    try:
        return max(0, int(values[-1]))
    except ValueError:
        return 0


class RunEventsConsumer(AsyncJsonWebsocketConsumer):
    channel_layer_alias = settings.RUN_CHANNEL_LAYER
    run_id: int
    sent_seq: int
    hidden: Sequence[str] = ()

    def __init__(self, *args: Any, names_hidden: NamesHidden, **kwargs: Any) -> None:
        # Required: a route that forgot it would tell every watcher every name.
        super().__init__(*args, **kwargs)
        self.names_hidden = names_hidden

    async def connect(self) -> None:
        self.run_id = int(self.scope["url_route"]["kwargs"]["run_id"])
        self.sent_seq = _parse_after(self.scope.get("query_string", b""))
        self._lock = asyncio.Lock()
        self._closing = False
        self._poller: asyncio.Task[None] | None = None
        self._guard: WatchGuard | None = None
        self._slots: SocketSlots | None = None
        self._heard_at = 0.0  # when the last announcement arrived
        user = self.scope.get("user")
        # Decided once, as the socket opens: someone who votes while watching is told on their next visit.
        hidden = await _load_run_for(self.run_id, user, self.names_hidden)
        if hidden is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.hidden = hidden
        user_id = user.pk if user is not None and user.is_authenticated else None
        slots = SocketSlots(socket_id=self.channel_name, user_id=user_id, address=address_of_scope(self.scope))
        refusal = await slots.take()
        if refusal is not None:
            await self.accept()  # then close: the browser gets the code and the reason, not a bare 403
            await self._close_saying(refusal.message, code=CLOSE_TOO_MANY)
            return
        self._slots = slots
        self.groups = [run_group(self.run_id)]
        await self.channel_layer.group_add(self.groups[0], self.channel_name)
        await self.accept()
        session = self.scope.get("session")
        session_key = session.session_key if user_id is not None and session is not None else None

        async def still_allowed() -> str | None:
            return await why_not_watching(run_id=self.run_id, user_id=user_id, session_key=session_key)

        self._guard = WatchGuard(slots=slots, still_allowed=still_allowed, on_lost=self._lost)
        await self._guard.__aenter__()
        await self._catch_up()
        if not self._closing:
            self._poller = asyncio.ensure_future(self._poll())

    async def disconnect(self, code: int) -> None:
        self._closing = True
        if self._guard is not None:
            await self._guard.stop()
        if self._slots is not None:
            await self._slots.give_back()
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Clients only listen; anything they send is ignored."""

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels closes stale database connections before handing a consumer each message, on
        # the process's one shared thread for synchronous code, where every thread-sensitive call
        # of every connection waits its turn: each live event left the event loop and waited in
        # that line before it could be sent. The announcements need no database (a gap is read
        # through _off_thread, which closes stale connections on the thread it reads on).
        if message["type"] == ANNOUNCEMENT:
            await self.run_events(message)
        else:
            await super().dispatch(message)

    # --- announcements from the channel layer ---

    async def run_events(self, message: dict[str, Any]) -> None:
        self._heard_at = time.monotonic()
        last_seq = int(message.get("last_seq", 0))
        if self._closing or last_seq <= self.sent_seq:
            return
        async with self._lock:
            inline = [e for e in message.get("events") or [] if e["seq"] > self.sent_seq]
            if inline and inline[0]["seq"] == self.sent_seq + 1 and inline[-1]["seq"] == last_seq:
                await self._send_in_order([event_shown(event, self.hidden) for event in inline])
                if inline[-1]["kind"] == "status" and inline[-1]["payload"].get("final"):
                    await self._finish()
                return
        await self._catch_up()  # a gap, or nothing inline: read from the database

    # --- internals ---

    async def _catch_up(self) -> None:
        async with self._lock:
            while not self._closing:
                events, final, last_seq = await _events_after(
                    self.run_id, self.sent_seq, settings.RUN_WS_REPLAY_PAGE, self.hidden
                )
                await self._send_in_order(events)
                if events and len(events) == settings.RUN_WS_REPLAY_PAGE:
                    continue
                if final and self.sent_seq >= last_seq:
                    await self._finish()
                return

    async def _send_in_order(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            if self._closing:
                return  # access lost, or the run over: nothing more goes out
            if event["seq"] != self.sent_seq + 1:
                if event["seq"] <= self.sent_seq:
                    continue  # a duplicate
                break  # a gap: the caller reads the rest from the database
            if not await self._send_or_stop({"type": "event", **event}):
                return
            self.sent_seq = event["seq"]

    async def _close_saying(self, message: str, *, code: int) -> None:
        self._closing = True
        if await self._send_or_stop({"type": "closing", "message": message}):
            await self.close(code=code)

    async def _send_or_stop(self, content: dict[str, Any]) -> bool:
        """Send, or learn that the server has closed the socket (its client fell too far behind:
        config/websocket_backlog.py) and stop: nothing more is read for it."""
        try:
            await self.send_json(content)
        except OSError:
            self._closing = True
            return False
        return True

    async def _lost(self, why: str) -> None:
        if not self._closing:
            await self._close_saying(why, code=CLOSE_FORBIDDEN)

    async def _finish(self) -> None:
        if not self._closing:
            self._closing = True
            await self.close(code=1000)

    async def _poll(self) -> None:
        try:
            every = settings.RUN_WS_POLL_SECONDS
            while not self._closing:
                await asyncio.sleep(every)
                if time.monotonic() - self._heard_at >= every:  # announcements flowing: nothing was lost
                    await self._catch_up()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("Run %s websocket: periodic catch-up failed", self.run_id)
            await self.close(code=1011)
