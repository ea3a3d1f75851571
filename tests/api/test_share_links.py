"""Share links through the API, as a script makes them: the link and its embed snippets in the
answer that made it (and in its Idempotency-Key replays), the lists, and revoking one, which
turns the link off at once."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from creations.models import Run
from creations.sharing.models import ShareLink
from creations.sharing.services import share_link_create
from tests.support.api import api_as
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes
from tests.support.sharing import visit

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(team: Team) -> Run:
    return finished_run(
        workspace=team.workspace, author=team.member, brief="A poster", outputs=[Output("poster.png", png_bytes())]
    )


def make(team: Team, run: Run, body: Any = None, **headers: str) -> Any:
    return api_as(team.member).post(f"/api/v1/runs/{run.pk}/share-links", body or {}, headers=headers)


def test_a_link_is_made_with_its_address_and_embeds_and_works_for_anyone(team: Team, run: Run) -> None:
    response = make(team, run, {"label": "press", "expires_in_days": 30})
    assert response.status_code == 201, response.content
    made = response.json()
    assert made["state"] == "active"
    assert (made["label"], made["run_id"], made["version"], made["created_by"]) == ("press", None, None, "bob")
    assert made["url"].startswith("http://127.0.0.1:8000/s/")
    assert made["token_hint"] == made["url"].rstrip("/")[-4:]
    assert made["expires_at"] is not None
    (embed,) = made["embeds"]
    assert embed["path"] == "poster.png"
    assert embed["iframe"].startswith(f'<iframe src="{embed["embed_url"]}"')
    assert made["oembed_url"].startswith("http://127.0.0.1:8000/oembed?url=")
    assert visit(Client(), made["url"]).status_code == 200
    # Only the answer that made it carries the address.
    (listed,) = api_as(team.member).get(f"/api/v1/runs/{run.pk}/share-links").json()
    assert (listed["id"], listed["url"], listed["embeds"], listed["view_count"]) == (made["id"], None, [], 1)


def test_a_retry_with_the_same_key_answers_the_same_link(team: Team, run: Run) -> None:
    first = make(team, run, {"label": "press"}, **{"Idempotency-Key": "share-1"})
    again = make(team, run, {"label": "press"}, **{"Idempotency-Key": "share-1"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["url"] == first.json()["url"]
    assert ShareLink.objects.count() == 1
    other = make(team, run, {"label": "printer"}, **{"Idempotency-Key": "share-1"})
    assert other.status_code == 422
    assert "different request" in other.json()["detail"]


def test_pin_shows_this_runs_version_only(team: Team, run: Run) -> None:
    made = make(team, run, {"pin": True}).json()
    assert (made["run_id"], made["version"]) == (run.pk, 1)


def test_bad_input_is_refused_naming_the_field(team: Team, run: Run) -> None:
    response = make(team, run, {"expires_in_days": 0, "label": "x" * 101})
    assert response.status_code == 422
    assert {error["field"] for error in response.json()["errors"]} == {"expires_in_days", "label"}
    assert not ShareLink.objects.exists()


def test_a_viewer_is_told_who_may_share(team: Team, run: Run) -> None:
    response = api_as(team.viewer).post(f"/api/v1/runs/{run.pk}/share-links", {})
    assert response.status_code == 403
    assert response.json()["detail"] == "Only owners, admins and members of this workspace can make share links."


def test_the_workspace_list_comes_in_pages(team: Team, run: Run) -> None:
    made = make(team, run).json()
    page = api_as(team.owner).get(f"/api/v1/workspaces/{team.workspace.slug}/share-links").json()
    assert [link["id"] for link in page["results"]] == [made["id"]]
    assert page["results"][0]["title"] == run.creation.title
    assert api_as(team.viewer).get(f"/api/v1/workspaces/{team.workspace.slug}/share-links").json()["results"] == []


def test_revoking_turns_the_link_off_at_once(team: Team, run: Run) -> None:
    made = make(team, run).json()
    response = api_as(team.owner).post(f"/api/v1/share-links/{made['id']}/revoke", {})
    assert response.status_code == 200
    assert response.json()["state"] == "revoked"
    assert response.json()["problem"] == "This link was turned off by the people who shared it."
    assert visit(Client(), made["url"]).status_code == 410
    assert api_as(team.owner).post(f"/api/v1/share-links/{made['id']}/revoke", {}).status_code == 200


@pytest.mark.parametrize("listing", ["run", "workspace"])
def test_a_list_costs_the_same_queries_however_many_links(team: Team, run: Run, listing: str) -> None:
    owner = api_as(team.owner)
    of_run, of_workspace = f"/api/v1/runs/{run.pk}", f"/api/v1/workspaces/{team.workspace.slug}"
    url = f"{of_run if listing == 'run' else of_workspace}/share-links"

    def queries() -> int:
        owner.get(url)  # the token's last use is noted once a minute: not in the count
        with CaptureQueriesContext(connection) as captured:
            assert owner.get(url).status_code == 200
        return len(captured)

    make(team, run)
    one = queries()
    for _ in range(10):  # by two people: each link's state is known without a query of its own
        make(team, run)
        share_link_create(creation=run.creation, user=team.owner)
    assert queries() == one


def test_a_body_that_is_not_the_schemas_is_refused(team: Team, run: Run) -> None:
    for body in ([1, 2], {"expires_days": 7}):
        response = make(team, run, body)
        assert response.status_code == 422, body
    assert not ShareLink.objects.exists()
