"""What keeps a live view of a run honest while it is open (a websocket, an API event stream):
its slot refreshed, so it keeps counting toward the per-person and per-address caps
(socket_slots.py), and every RUN_WS_ACCESS_RECHECK_SECONDS whether its holder may still
watch: the run's access rule (creations/access.py) and the credential the stream was opened
with (a browser's session here; the API brings its token check).

It runs on a clock of its own beside the stream, never between its events: a run that never
goes quiet would otherwise never be checked, and a client that stops reading holds its stream
at a write while its slot must go on counting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from importlib import import_module
from types import SimpleNamespace, TracebackType

from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.contrib.auth import get_user

from creations.access import may_still_watch_run
from creations.events.socket_slots import SocketSlots

log = logging.getLogger(__name__)

LOST_ACCESS = "You can no longer see this run."
SIGNED_OUT = "You were signed out: sign in again to go on watching this run."

StillAllowed = Callable[[], Awaitable[str | None]]  # None: may go on; else why not, said to the person


def session_user_id(session_key: str | None) -> int | None:
    """The person a browser session still signs in, read afresh; None once it was signed out,
    expired, ended by a password change, or its person deactivated (Django's own rules)."""
    if not session_key:
        return None
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user = get_user(SimpleNamespace(session=store))  # type: ignore[arg-type]  # all get_user reads is .session
    return user.pk if user.is_authenticated else None


def _why_not_watching(run_id: int, user_id: int | None, session_key: str | None) -> str | None:
    if user_id is not None and session_key is not None and session_user_id(session_key) != user_id:
        return SIGNED_OUT
    if not may_still_watch_run(run_id=run_id, user_id=user_id):
        return LOST_ACCESS
    return None


# Reads run in a pool of threads: one shared thread would make every open stream's checks wait in one line.
_why_not_watching_off_thread = DatabaseSyncToAsync(_why_not_watching, thread_sensitive=False)


async def why_not_watching(*, run_id: int, user_id: int | None, session_key: str | None = None) -> str | None:
    """None while the person (None: signed out) may go on watching the run; else why not. With a
    `session_key`, the browser session the stream was opened with must still sign them in."""
    return await _why_not_watching_off_thread(run_id, user_id, session_key)


class WatchGuard:
    """`async with WatchGuard(slots=..., still_allowed=..., on_lost=...)`: while the block runs,
    refresh `slots` and ask `still_allowed` on the clock; the first refusal goes to `on_lost`,
    and the guard stops."""

    def __init__(
        self,
        *,
        slots: SocketSlots,
        still_allowed: StillAllowed,
        on_lost: Callable[[str], Awaitable[None]],
    ) -> None:
        self._slots = slots
        self._still_allowed = still_allowed
        self._on_lost = on_lost
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> WatchGuard:
        self._task = asyncio.ensure_future(self._watch())
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.stop()

    async def stop(self) -> None:
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None

    async def _watch(self) -> None:
        recheck = settings.RUN_WS_ACCESS_RECHECK_SECONDS
        # A slot unrefreshed for RUN_WS_SLOT_STALE_SECONDS (at least 3 polls) is taken for a dead process's.
        refresh = settings.RUN_WS_POLL_SECONDS
        now = time.monotonic()
        next_refresh, next_check = now + refresh, now + recheck
        while True:
            await asyncio.sleep(max(0.0, min(next_refresh, next_check) - time.monotonic()))
            if time.monotonic() >= next_refresh:
                await self._slots.refresh()
                next_refresh = time.monotonic() + refresh
            if time.monotonic() < next_check:
                continue
            try:
                refusal = await self._still_allowed()
            except Exception:  # the database away: the stream's own reads fail and end it
                log.warning("Live run view: access not checked this time", exc_info=True)
                refusal = None
            next_check = time.monotonic() + recheck
            if refusal is not None:
                await self._on_lost(refusal)
                return
