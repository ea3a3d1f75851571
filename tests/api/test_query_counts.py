"""What each read of the API costs, pinned: a member's request takes as many queries
with one row of everything as with 25 (artifacts, versions by other people, events,
workspaces, models, runs, usage records), so an N+1 or a lost select_related changes
a number here. Each count includes the token's own lookup."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.support.api import ApiClient, api_as
from tests.support.api_reads import ReadWorld
from tests.support.comparisons import _comparisons_forgotten  # noqa: F401
from tests.support.fixtures.accounts import Team

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("_comparisons_forgotten"),
    pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume"),
]

SMALL, LARGE = 1, 25

# Each read: its address in a world, and the queries it takes at any size.
READS: dict[str, tuple[Callable[[ReadWorld], str], int]] = {
    "workspaces": (lambda w: "/api/v1/workspaces", 3),
    "workspace": (lambda w: f"/api/v1/workspaces/{w.team.workspace.slug}", 3),
    "models": (lambda w: f"/api/v1/workspaces/{w.team.workspace.slug}/models", 3),
    "usage by person": (lambda w: f"/api/v1/workspaces/{w.team.workspace.slug}/usage", 6),
    "usage by model": (lambda w: f"/api/v1/workspaces/{w.team.workspace.slug}/usage?by=model", 6),
    "runs": (lambda w: "/api/v1/runs", 2),
    "runs of a workspace": (lambda w: f"/api/v1/runs?workspace={w.team.workspace.slug}", 3),
    "run": (lambda w: f"/api/v1/runs/{w.subject.pk}", 3),
    "versions": (lambda w: f"/api/v1/runs/{w.subject.pk}/versions", 5),
    "events": (lambda w: f"/api/v1/runs/{w.subject.pk}/events", 5),
    "artifacts": (lambda w: f"/api/v1/runs/{w.subject.pk}/artifacts", 4),
    "artifacts zip": (lambda w: f"/api/v1/runs/{w.subject.pk}/artifacts/zip", 4),
    "comparison": (lambda w: f"/api/v1/runs/{w.subject.pk}/compare/{w.newer.pk}", 5),
    "artifact download": (lambda w: f"/api/v1/artifacts/{w.artifact.pk}/download", 3),
    "artifact preview": (lambda w: f"/api/v1/artifacts/{w.artifact.pk}/preview", 3),
}
# The reads whose answer lists what the world has more of: a bigger world makes a longer answer.
LISTS = {
    "workspaces",
    "models",
    "usage by person",
    "usage by model",
    "runs",
    "runs of a workspace",
    "versions",
    "events",
    "artifacts",
    "artifacts zip",
    "comparison",
}


def _read(client: ApiClient, url: str) -> tuple[int, bytes]:
    """The queries one request takes (its streamed body included), and that body."""
    client.get(url)  # warm what a running server has warm (the token's last use is noted once a minute)
    with CaptureQueriesContext(connection) as captured:
        response: Any = client.get(url)
        assert response.status_code == 200, response.content
        body = b"".join(response) if response.streaming else response.content
    return len(captured), body


@pytest.mark.parametrize("read", READS)
def test_each_read_costs_the_same_queries_at_any_size(team: Team, read: str) -> None:
    address, pinned = READS[read]
    world = ReadWorld.make(team)
    client = api_as(team.member)
    world.grow(SMALL)
    small, small_body = _read(client, address(world))
    world.grow(LARGE - SMALL)
    large, large_body = _read(client, address(world))
    assert (small, large) == (pinned, pinned)
    if read in LISTS:
        assert len(large_body) > len(small_body)
