"""Who may watch a run's live trajectory, and what a late watcher receives."""

from __future__ import annotations

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

from creations.events.store import store_events
from creations.models import RunStatus, Visibility
from creations.runs.state import run_finish
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from tests.support.fixtures.runs import AtelierServer
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
