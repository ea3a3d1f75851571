"""A run's live events reach its websocket without waiting for the process's shared thread for
synchronous code, where every thread-sensitive call of every connection waits its turn: the
socket's consumer handles an announcement on the event loop alone.

Against the platform's own consumer and channel layer on a real Redis, the events stored and
announced as a worker does, from another thread (so the rows are committed). The server is
Channels' test communicator rather than daphne: it lets the test hold the shared thread, which
in daphne is out of a test's reach. tests/creations/events/test_websocket.py watches through daphne.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from config.routing import websocket_urlpatterns
from creations.events.store import store_events
from creations.models import RunStatus
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# Long enough that the socket's slow catch-up from the database (RUN_WS_POLL_SECONDS) cannot be
# what delivers the event instead of its announcement.
WITHIN_SECONDS = 5


def test_a_live_event_reaches_the_socket_while_the_shared_sync_thread_is_busy(team: Team, settings: Any) -> None:
    settings.RUN_WS_POLL_SECONDS = 60
    run = make_run(team, status=RunStatus.RUNNING)
    store_events(run.pk, [("step_started", {"step": 1, "remaining": 9})])

    async def watch() -> list[dict[str, Any]]:
        socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/runs/{run.pk}/")
        socket.scope["client"] = ("127.0.0.1", 50000)
        socket.scope["user"] = team.member
        connected, _ = await socket.connect(timeout=10)
        assert connected
        seen = [json.loads((await socket.receive_output(timeout=10))["text"])]  # the replay
        released = threading.Event()
        # Thread-sensitive: on the one thread every such call of the process shares (here, the
        # test's own, which async_to_sync lends), held until the event has arrived or not.
        busy = asyncio.ensure_future(sync_to_async(released.wait, thread_sensitive=True)())
        try:
            await asyncio.sleep(0.1)  # it holds the thread now
            await sync_to_async(store_events, thread_sensitive=False)(
                run.pk, [("step_started", {"step": 2, "remaining": 8})]
            )
            message = await socket.receive_output(timeout=WITHIN_SECONDS)
            seen.append(json.loads(message["text"]))
        finally:
            released.set()
            await busy
            await socket.disconnect()
        return seen

    events = async_to_sync(watch)()

    assert [(event["seq"], event["payload"]["step"]) for event in events] == [(1, 1), (2, 2)]
