"""The run's live stream (the one websocket route) for each role and visibility:
those who may see the creation receive its events; the others are refused at
the handshake. Its HTTP counterpart is test_role_matrix.py."""

from __future__ import annotations

import pytest
from websockets.exceptions import InvalidStatus

from devstack.stack import AtelierServer
from tests.support.role_world import ROLES, VISIBILITIES, build_world, sees
from tests.support.urlconf import websocket_routes
from tests.support.wsclient import open_stream, read_events

STREAM_ROUTE = "ws/runs/<int:run_id>/"


def test_every_websocket_route_is_in_the_matrix() -> None:
    routes = sorted(r.route for r in websocket_routes())
    assert routes == [STREAM_ROUTE], f"websocket routes changed; give each a role test here: {routes}"


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("visibility", VISIBILITIES)
@pytest.mark.parametrize("who", ROLES)
def test_the_live_stream_is_for_those_who_see_the_creation(run_stack: AtelierServer, who: str, visibility: str) -> None:
    world = build_world(visibility)
    actor = world.people.get(who)
    cookie = run_stack.cookie_for(actor) if actor is not None else None
    if not sees(who, visibility):
        with pytest.raises(InvalidStatus) as refused_at_handshake:
            open_stream(run_stack, world.run.pk, cookie=cookie)
        assert refused_at_handshake.value.response.status_code == 403
        return
    with open_stream(run_stack, world.run.pk, cookie=cookie) as ws:
        events, closed = read_events(ws, timeout=10)
    # On a failure, what the stack's processes logged meanwhile tells a refused read from a slow one.
    told = f"stream closed by the server: {closed}\n{run_stack.logs()}"
    assert [e["seq"] for e in events] == list(range(1, world.run.last_seq + 1)), told
    assert events[-1]["payload"]["final"] is True
    assert closed, "the stream of a finished run ends after its final event"
