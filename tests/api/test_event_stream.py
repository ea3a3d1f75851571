"""A run's events as Server-Sent Events from the running platform (daphne): a script
that loses its connection resumes with Last-Event-ID and gets exactly what it
missed, in order, then the live events, the final one, and the end of the stream.
A stream of a run that never goes quiet still checks, on its own clock, that its
holder may watch, and keeps holding its slot."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from httpx_sse import ServerSentEvent, connect_sse

from api.tokens import token_revoke, tokens_of
from creations.events.store import store_events
from creations.models import RunStatus, Visibility
from creations.runs.state import run_finish
from devstack.stack import PROCESS_ENV, AtelierServer
from tests.support.api import token_for
from tests.support.chatty_run import chatty_run
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from workspaces.models import Membership

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def step(i: int) -> tuple[str, dict[str, Any]]:
    return ("step_started", {"step": i, "remaining": 20 - i})


def client_for(stack: AtelierServer, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://localhost:{stack.port}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx.Timeout(10, read=20),
    )


def events_of(source: Iterator[ServerSentEvent], count: int) -> list[ServerSentEvent]:
    return [next(source) for _ in range(count)]


def test_a_dropped_stream_resumes_with_exactly_what_was_missed(run_stack: AtelierServer, team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    store_events(run.pk, [step(1), step(2), step(3)])
    with client_for(run_stack, token_for(team.member)) as http:
        with connect_sse(http, "GET", f"/api/v1/runs/{run.pk}/events/stream") as stream:
            assert stream.response.headers["content-type"].startswith("text/event-stream")
            first = events_of(stream.iter_sse(), 3)
        assert [(e.id, e.event) for e in first] == [("1", "step_started"), ("2", "step_started"), ("3", "step_started")]
        assert json.loads(first[2].data)["payload"] == {"step": 3, "remaining": 17}

        store_events(run.pk, [step(4), step(5)])  # while nobody listens
        with connect_sse(
            http, "GET", f"/api/v1/runs/{run.pk}/events/stream?after=1", headers={"Last-Event-ID": first[-1].id}
        ) as stream:
            source = stream.iter_sse()
            missed = events_of(source, 2)
            store_events(run.pk, [step(6)])  # live, with the stream open
            live = events_of(source, 1)
            run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="Submitted.")
            rest = list(source)  # until the server ends the stream
    assert [e.id for e in missed] == ["4", "5"]
    assert [e.id for e in live] == ["6"]
    assert len(rest) == 1
    final = json.loads(rest[0].data)
    assert (rest[0].event, final["payload"]["status"], final["payload"]["final"]) == ("status", "succeeded", True)
    assert int(rest[0].id) == final["seq"] == 7


def test_a_finished_runs_stream_replays_everything_and_ends(run_stack: AtelierServer, team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING, visibility=Visibility.PUBLIC)
    store_events(run.pk, [step(1), step(2)])
    run_finish(run_id=run.pk, status=RunStatus.FAILED, reason="The model stopped answering.")
    with (
        client_for(run_stack, token_for(team.outsider)) as http,  # public: anyone with a token sees it
        connect_sse(http, "GET", f"/api/v1/runs/{run.pk}/events/stream") as stream,
    ):
        events = list(stream.iter_sse())
    assert [e.id for e in events] == ["1", "2", "3"]
    assert json.loads(events[-1].data)["payload"]["reason"] == "The model stopped answering."


def test_an_idle_stream_sends_keep_alive_comments(run_stack: AtelierServer, team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    started = time.monotonic()
    with (
        client_for(run_stack, token_for(team.viewer)) as http,
        http.stream("GET", f"/api/v1/runs/{run.pk}/events/stream") as response,
    ):
        lines = response.iter_lines()
        assert next(lines) == ": stream open"  # at once, before any event
        comment = next(line for line in lines if line.startswith(":"))
    assert comment == ": keep-alive"
    assert time.monotonic() - started < 15


def test_others_cannot_stream_a_workspace_run(run_stack: AtelierServer, team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    with client_for(run_stack, token_for(team.outsider)) as http:
        response = http.get(f"/api/v1/runs/{run.pk}/events/stream")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    with httpx.Client(base_url=f"http://localhost:{run_stack.port}") as anonymous:
        assert anonymous.get(f"/api/v1/runs/{run.pk}/events/stream").status_code == 401


RECHECK_SECONDS = float(PROCESS_ENV["RUN_WS_ACCESS_RECHECK_SECONDS"])  # 1 s in the test stack


def closing_of(source: Iterator[ServerSentEvent], *, within: float) -> tuple[str | None, float]:
    """Read a stream until the server's `closing` event: its message and how long it took
    (None when it did not come within `within` seconds, or the stream ended without it)."""
    started = time.monotonic()
    for sse in source:
        if sse.event == "closing":
            return json.loads(sse.data)["message"], time.monotonic() - started
        if time.monotonic() - started > within:
            break
    return None, time.monotonic() - started


def test_a_member_removed_while_a_chatty_run_streams_stops_receiving(run_stack: AtelierServer, team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    with (
        chatty_run(run.pk),  # a step every 0.1 s: the stream is never idle
        client_for(run_stack, token_for(team.viewer)) as http,
        connect_sse(http, "GET", f"/api/v1/runs/{run.pk}/events/stream") as stream,
    ):
        source = stream.iter_sse()
        assert next(source).event == "step_started"
        Membership.objects.filter(workspace=team.workspace, user=team.viewer).delete()
        message, took = closing_of(source, within=20)
    assert message == "You can no longer see this run."
    assert took < RECHECK_SECONDS + 4


def test_a_revoked_token_stops_receiving_a_chatty_run(run_stack: AtelierServer, team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    with (
        chatty_run(run.pk),
        client_for(run_stack, token_for(team.member)) as http,
        connect_sse(http, "GET", f"/api/v1/runs/{run.pk}/events/stream") as stream,
    ):
        source = stream.iter_sse()
        assert next(source).event == "step_started"
        [token] = tokens_of(user=team.member)
        token_revoke(user=team.member, pk=token.pk)
        message, took = closing_of(source, within=20)
    assert message == "This token no longer works (revoked or expired): the stream ends here."
    assert took < RECHECK_SECONDS + 4


def test_streams_of_a_chatty_run_keep_holding_their_slots(run_stack: AtelierServer, team: Team) -> None:
    from django.conf import settings

    run = make_run(team, status=RunStatus.RUNNING)
    url = f"/api/v1/runs/{run.pk}/events/stream"
    with chatty_run(run.pk), client_for(run_stack, token_for(team.member)) as http, ExitStack() as open_streams:
        sources = []  # kept: a source let go of closes its connection
        for _ in range(4):  # RUN_WS_MAX_PER_USER=4 in the test stack
            sources.append(open_streams.enter_context(connect_sse(http, "GET", url)).iter_sse())
            assert next(sources[-1]).event == "step_started"
        # Longer than a slot lasts without being refreshed: a stream that never goes idle must still refresh it.
        time.sleep(settings.RUN_WS_SLOT_STALE_SECONDS + 3)
        with connect_sse(http, "GET", url) as fifth:
            first = next(fifth.iter_sse())
    assert first.event == "closing"
    assert "at most 4" in json.loads(first.data)["message"]


def test_a_browser_stream_ends_when_its_session_is_signed_out(run_stack: AtelierServer, team: Team) -> None:
    from django.contrib.sessions.models import Session

    run = make_run(team, status=RunStatus.RUNNING)
    cookie = run_stack.cookie_for(team.member)
    with (
        chatty_run(run.pk),
        httpx.Client(base_url=f"http://localhost:{run_stack.port}", headers={"Cookie": cookie}, timeout=20) as http,
        connect_sse(http, "GET", f"/api/v1/runs/{run.pk}/events/stream") as stream,
    ):
        source = stream.iter_sse()
        assert next(source).event == "step_started"
        Session.objects.filter(session_key=cookie.removeprefix("sessionid=")).delete()
        message, took = closing_of(source, within=20)
    assert message == "You were signed out: sign in again to go on watching this run."
    assert took < RECHECK_SECONDS + 4
