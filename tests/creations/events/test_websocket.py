"""Who may watch a run's live trajectory, and what a late watcher receives; a watcher who
loses access, or is signed out, stops receiving even while the run keeps talking."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import ExitStack

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

from creations.events.store import store_events
from creations.models import RunStatus, Visibility
from creations.runs.state import run_finish
from devstack.stack import PROCESS_ENV, AtelierServer
from tests.support.chatty_run import chatty_run
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from tests.support.wsclient import open_stream, read_events

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

CALL = {"step": 1, "call_id": "c1", "name": "execute_bash", "arguments": {"command": "ls"}}
RESULT = {"step": 1, "call_id": "c1", "name": "execute_bash", "output": "", "is_error": False, "duration": 0.1}


def _finished_run(team: Team, visibility: str = Visibility.WORKSPACE) -> int:
    run = make_run(team, status=RunStatus.RUNNING, visibility=visibility)
    store_events(run.pk, [("step_started", {"step": i, "remaining": 5 - i}) for i in range(1, 6)])
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="Submitted.")
    return run.pk


def test_a_member_replays_a_finished_run_and_the_socket_closes_after_the_final_event(
    run_stack: AtelierServer, team: Team
) -> None:
    run_id = _finished_run(team)
    with open_stream(run_stack, run_id, cookie=run_stack.cookie_for(team.member)) as ws:
        events, closed = read_events(ws)
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5, 6]
    assert events[-1]["kind"] == "status"
    assert events[-1]["payload"]["final"] is True
    assert closed


def test_after_n_replays_only_what_came_later(run_stack: AtelierServer, team: Team) -> None:
    run_id = _finished_run(team)
    with open_stream(run_stack, run_id, after=4, cookie=run_stack.cookie_for(team.viewer)) as ws:
        events, closed = read_events(ws)
    assert [e["seq"] for e in events] == [5, 6]
    assert closed


@pytest.mark.parametrize("who", ["outsider", "anonymous"])
def test_a_non_member_cannot_subscribe_to_a_workspace_run(run_stack: AtelierServer, team: Team, who: str) -> None:
    run_id = _finished_run(team)
    cookie = run_stack.cookie_for(team.outsider) if who == "outsider" else None
    with pytest.raises(InvalidStatus) as refused:
        open_stream(run_stack, run_id, cookie=cookie)
    assert refused.value.response.status_code == 403


def test_a_public_run_can_be_watched_signed_out(run_stack: AtelierServer, team: Team) -> None:
    run_id = _finished_run(team, visibility=Visibility.PUBLIC)
    with open_stream(run_stack, run_id) as ws:
        events, _closed = read_events(ws)
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5, 6]


def test_a_private_run_is_hidden_from_other_members(run_stack: AtelierServer, team: Team) -> None:
    run_id = _finished_run(team, visibility=Visibility.PRIVATE)  # the owner wrote it
    with pytest.raises(InvalidStatus):
        open_stream(run_stack, run_id, cookie=run_stack.cookie_for(team.member))


def test_a_page_from_another_origin_cannot_open_the_socket(run_stack: AtelierServer, team: Team) -> None:
    run_id = _finished_run(team)
    with pytest.raises(InvalidStatus) as refused:
        connect(
            run_stack.ws_url(f"/ws/runs/{run_id}/"),
            origin=Origin("http://evil.example"),
            additional_headers={"Cookie": run_stack.cookie_for(team.member)},
        )
    assert refused.value.response.status_code == 403


def test_a_live_watcher_gets_new_events_as_they_are_stored(run_stack: AtelierServer, team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    store_events(run.pk, [("step_started", {"step": 1, "remaining": 9})])
    with open_stream(run_stack, run.pk, cookie=run_stack.cookie_for(team.member)) as ws:
        first, _ = read_events(ws, until_seq=1, timeout=10)
        store_events(run.pk, [("tool_call", CALL), ("tool_result", RESULT)])
        live, _ = read_events(ws, until_seq=3, timeout=10)
        run_finish(run_id=run.pk, status=RunStatus.CANCELLED, reason="Cancelled.")
        last, closed = read_events(ws, timeout=10)
    assert [e["seq"] for e in first + live + last] == [1, 2, 3, 4]
    assert last[-1]["payload"]["status"] == "cancelled"
    assert closed


def _running_run(team: Team, visibility: str = Visibility.WORKSPACE) -> int:
    run = make_run(team, status=RunStatus.RUNNING, visibility=visibility)
    store_events(run.pk, [("step_started", {"step": 1, "remaining": 4})])
    return run.pk


def _refusal(ws: ClientConnection) -> tuple[str, int | None]:
    """The message and close code of a socket the server ends at once."""
    message = json.loads(ws.recv(timeout=10))
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=10)
    return message.get("message", ""), closed.value.rcvd.code if closed.value.rcvd else None


def test_one_person_cannot_hold_more_live_sockets_than_the_limit(run_stack: AtelierServer, team: Team) -> None:
    run_id = _running_run(team)
    cookie = run_stack.cookie_for(team.member)  # RUN_WS_MAX_PER_USER=4 in the test stack
    with ExitStack() as stack:
        sockets = [stack.enter_context(open_stream(run_stack, run_id, cookie=cookie)) for _ in range(4)]
        for ws in sockets:
            assert json.loads(ws.recv(timeout=10))["seq"] == 1
        with open_stream(run_stack, run_id, cookie=cookie) as fifth:
            message, code = _refusal(fifth)
        assert code == 4429
        assert "at most 4" in message
        with open_stream(run_stack, run_id, cookie=run_stack.cookie_for(team.owner)) as someone_else:
            assert json.loads(someone_else.recv(timeout=10))["seq"] == 1  # the limit is per person
        sockets.pop().close()
        time.sleep(0.5)  # the server hears the close
        with open_stream(run_stack, run_id, cookie=cookie) as again:
            assert json.loads(again.recv(timeout=10))["seq"] == 1  # a freed slot is usable again


@pytest.mark.alone  # counts every socket from this machine's address: none of another test's may linger
def test_one_address_cannot_hold_more_live_sockets_than_the_limit(run_stack: AtelierServer, team: Team) -> None:
    run_id = _running_run(team, visibility=Visibility.PUBLIC)
    with ExitStack() as stack:
        # RUN_WS_MAX_PER_ADDRESS=12 in the test stack; signed out, so only the address counts.
        sockets = [stack.enter_context(open_stream(run_stack, run_id)) for _ in range(12)]
        for ws in sockets:
            assert json.loads(ws.recv(timeout=10))["seq"] == 1
        with open_stream(run_stack, run_id) as one_more:
            message, code = _refusal(one_more)
    assert code == 4429
    assert "from this address" in message


def test_a_member_removed_while_watching_stops_receiving_the_run(run_stack: AtelierServer, team: Team) -> None:
    from workspaces.models import Membership

    run_id = _running_run(team)
    with open_stream(run_stack, run_id, cookie=run_stack.cookie_for(team.viewer)) as ws:
        assert json.loads(ws.recv(timeout=10))["seq"] == 1
        Membership.objects.filter(workspace=team.workspace, user=team.viewer).delete()
        store_events(run_id, [("step_started", {"step": 2, "remaining": 3})])
        message, code = _refusal_after_events(ws)
    assert code == 4403
    assert message == "You can no longer see this run."


def _refusal_after_events(ws: ClientConnection) -> tuple[str, int | None]:
    """Skip the events that were on their way, then read the closing message and code."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            message = json.loads(ws.recv(timeout=10))
        except ConnectionClosed as closed:
            return "", closed.rcvd.code if closed.rcvd else None
        if message["type"] == "closing":
            with pytest.raises(ConnectionClosed) as closed_after:
                ws.recv(timeout=10)
            return message["message"], closed_after.value.rcvd.code if closed_after.value.rcvd else None
    raise AssertionError("the socket stayed open")


RECHECK_SECONDS = float(PROCESS_ENV["RUN_WS_ACCESS_RECHECK_SECONDS"])  # 1 s in the test stack


def _closing_while_chatty(
    run_stack: AtelierServer, run_id: int, cookie: str, take_away: Callable[[], object]
) -> tuple[str, int | None, float]:
    """Watch a run that stores a step every 0.1 s, call `take_away()` once events flow, then read until the
    server closes: its message, its code and how long it took."""
    with chatty_run(run_id), open_stream(run_stack, run_id, cookie=cookie) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "event"
        take_away()
        started = time.monotonic()
        message, code = _refusal_after_events(ws)
        return message, code, time.monotonic() - started


def test_a_member_removed_while_a_chatty_run_streams_stops_receiving(run_stack: AtelierServer, team: Team) -> None:
    from workspaces.models import Membership

    run_id = _running_run(team)
    message, code, took = _closing_while_chatty(
        run_stack,
        run_id,
        run_stack.cookie_for(team.viewer),
        lambda: Membership.objects.filter(workspace=team.workspace, user=team.viewer).delete(),
    )
    assert (code, message) == (4403, "You can no longer see this run.")
    assert took < RECHECK_SECONDS + 4


def test_a_watcher_signed_out_elsewhere_stops_receiving(run_stack: AtelierServer, team: Team) -> None:
    from django.contrib.sessions.models import Session

    run_id = _running_run(team)
    cookie = run_stack.cookie_for(team.member)
    session_key = cookie.removeprefix("sessionid=")
    message, code, took = _closing_while_chatty(
        run_stack, run_id, cookie, lambda: Session.objects.filter(session_key=session_key).delete()
    )
    assert (code, message) == (4403, "You were signed out: sign in again to go on watching this run.")
    assert took < RECHECK_SECONDS + 4


def test_a_deactivated_account_stops_receiving(run_stack: AtelierServer, team: Team) -> None:
    from django.contrib.auth.models import User

    run_id = _running_run(team)
    message, code, took = _closing_while_chatty(
        run_stack,
        run_id,
        run_stack.cookie_for(team.member),
        lambda: User.objects.filter(pk=team.member.pk).update(is_active=False),
    )
    assert (code, message) == (4403, "You were signed out: sign in again to go on watching this run.")
    assert took < RECHECK_SECONDS + 4
