"""A run's events as JSON pages: what a script polls when it does not stream."""

from __future__ import annotations

import pytest

from creations.events.store import store_events
from creations.models import RunStatus, Visibility
from creations.runs.state import run_finish
from tests.support.api import api_as
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def test_pages_walk_every_event_once_then_say_the_run_ended(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    store_events(run.pk, [("step_started", {"step": i, "remaining": 9 - i}) for i in range(1, 6)])
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="Submitted.")
    client, after, seen, pages = api_as(team.viewer), 0, [], []
    while True:
        page = client.get(f"/api/v1/runs/{run.pk}/events?after={after}&limit=2").json()
        pages.append(page)
        seen += [event["seq"] for event in page["events"]]
        if not page["events"]:
            break
        after = page["next_after"]
    assert seen == [1, 2, 3, 4, 5, 6]
    assert pages[-1] == {"events": [], "last_seq": 6, "is_final": True, "next_after": 6}
    assert pages[0]["events"][0]["kind"] == "step_started"
    assert pages[-2]["events"][-1]["payload"]["final"] is True


def test_bad_paging_is_a_422_and_private_runs_of_others_are_not_found(team: Team) -> None:
    run = make_run(team, visibility=Visibility.PRIVATE)
    client = api_as(team.member)
    assert client.get(f"/api/v1/runs/{run.pk}/events?after=-1").status_code == 422
    assert client.get(f"/api/v1/runs/{run.pk}/events").status_code == 404
    assert api_as(team.owner).get(f"/api/v1/runs/{run.pk}/events?limit=5000").status_code == 422
    assert api_as(team.owner).get(f"/api/v1/runs/{run.pk}/events").json()["events"] == []
