"""Following a run's stream: a dropped connection resumes after the last event shown."""

from __future__ import annotations

import io

import httpx
import pytest

from atelier_cli.answers import Run
from atelier_cli.errors import Unreachable
from atelier_cli.event_stream import RunFollower
from atelier_cli.trajectory import TrajectoryPrinter
from tests.cli.fake_api import DroppedStream, FakeApi, run_answer
from tests.cli.recorded import RUN_EVENTS, numbered, sse_body

EVENTS = numbered(RUN_EVENTS)
SSE = {"Content-Type": "text/event-stream"}
FINAL_RUN = run_answer(5, status="succeeded", reason="submitted", is_final=True)


def follow(api: FakeApi) -> tuple[Run, str]:
    out = io.StringIO()
    run = RunFollower(api.client(), 5, TrajectoryPrinter(out, colour=False), sleep=lambda s: None).follow()
    return run, out.getvalue()


def test_a_dropped_connection_resumes_from_the_last_event_shown_and_repeats_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    streams = iter(
        [
            httpx.Response(200, headers=SSE, stream=DroppedStream(sse_body(EVENTS[:9]))),
            # The server may send an event the client already has; it is shown once.
            httpx.Response(200, headers=SSE, content=sse_body(EVENTS[8:])),
        ]
    )
    api = FakeApi(
        {
            ("GET", "/runs/5/events/stream"): lambda request: next(streams),
            ("GET", "/runs/5"): lambda request: httpx.Response(200, json=FINAL_RUN),
        }
    )
    run, text = follow(api)
    first, second = api.sent("GET", "/runs/5/events/stream")
    assert "Last-Event-ID" not in first.headers
    assert second.headers["Last-Event-ID"] == "9"
    assert run.status == "succeeded"
    assert text.count("$ cat /testbed/input/places.csv") == 1
    assert text.count("● running") == 1
    assert text.rstrip().endswith("14 s in the sandbox")
    assert "Connection lost (the connection closed unexpectedly" in capsys.readouterr().err


def test_a_stream_that_ends_before_the_run_does_is_opened_again() -> None:
    streams = iter([sse_body(EVENTS[:3]), sse_body([]), sse_body(EVENTS[3:])])
    runs = iter([{**FINAL_RUN, "is_final": False, "status": "running"}] * 2 + [FINAL_RUN])
    api = FakeApi(
        {
            ("GET", "/runs/5/events/stream"): lambda request: httpx.Response(200, headers=SSE, content=next(streams)),
            ("GET", "/runs/5"): lambda request: httpx.Response(200, json=next(runs)),
        }
    )
    run, text = follow(api)
    assert [r.headers.get("Last-Event-ID") for r in api.sent("GET", "/runs/5/events/stream")] == [None, "3", "3"]
    assert run.is_final
    assert text.count("● succeeded") == 1


def test_it_gives_up_saying_where_when_the_server_stays_away() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    api = FakeApi({("GET", "/runs/5/events/stream"): refuse})
    now = iter(range(0, 10_000, 30))
    follower = RunFollower(
        api.client(), 5, TrajectoryPrinter(io.StringIO()), sleep=lambda s: None, clock=lambda: next(now)
    )
    with pytest.raises(Unreachable, match=r"Could not reach http://atelier.test: the connection was refused"):
        follower.follow()
    assert len(api.sent("GET", "/runs/5/events/stream")) > 2
