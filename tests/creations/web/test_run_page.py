"""A run's page: its trajectory, artifacts and controls, for each role and (if public) anyone."""

import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Creation, Run, RunEvent, Visibility
from tests.support.fixtures.accounts import Team
from tests.support.pages import a_run, signed_in

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


def test_a_finished_run_page_shows_its_trajectory_and_artifacts(team: Team, client: Client) -> None:
    run = a_run(team)
    RunEvent.objects.create(
        run=run, seq=2, kind="tool_call",
        payload={"step": 1, "call_id": "c1", "name": "execute_bash", "arguments": {"command": "echo <b>hi</b>"}},
    )  # fmt: skip
    RunEvent.objects.create(
        run=run, seq=3, kind="tool_result",
        payload={"step": 1, "call_id": "c1", "name": "execute_bash", "output": "<b>hi</b>\n", "is_error": False,
                 "exit_code": 0, "duration": 0.2},
    )  # fmt: skip
    response = signed_in(client, team.member).get(reverse("run_detail", args=[run.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "echo &lt;b&gt;hi&lt;/b&gt;" in html
    assert "exit 0" in html
    assert "poster.png" in html
    assert "/r/" in html


def test_a_live_run_page_connects_to_the_stream(team: Team, client: Client) -> None:
    creation = Creation.objects.create(workspace=team.workspace, author=team.owner, brief="A map")
    run = Run.objects.create(creation=creation, started_by=team.member)  # the member ran it again
    html = signed_in(client, team.member).get(reverse("run_detail", args=[run.pk])).content.decode()
    assert f'data-ws-url="/ws/runs/{run.pk}/"' in html
    assert "run_page.js" in html
    assert "Cancel run" in html


def test_a_member_sees_no_cancel_button_on_someone_elses_run(team: Team, client: Client) -> None:
    creation = Creation.objects.create(workspace=team.workspace, author=team.owner, brief="A map")
    run = Run.objects.create(creation=creation, started_by=team.owner)
    assert "Cancel run" not in signed_in(client, team.member).get(reverse("run_detail", args=[run.pk])).content.decode()
    assert "Cancel run" in signed_in(Client(), team.owner).get(reverse("run_detail", args=[run.pk])).content.decode()


def test_viewers_watch_but_cannot_cancel(team: Team, client: Client) -> None:
    creation = Creation.objects.create(workspace=team.workspace, author=team.owner, brief="A map")
    run = Run.objects.create(creation=creation)
    html = signed_in(client, team.viewer).get(reverse("run_detail", args=[run.pk])).content.decode()
    assert "Cancel run" not in html


def test_outsiders_cannot_see_a_run_or_its_artifacts(team: Team, client: Client) -> None:
    run = a_run(team)
    client = signed_in(client, team.outsider)
    for name in ("run_detail", "run_artifacts", "run_download_zip", "run_trajectory_json"):
        assert client.get(reverse(name, args=[run.pk])).status_code == 404, name


def test_anyone_can_see_a_public_run(team: Team, client: Client) -> None:
    run = a_run(team, visibility=Visibility.PUBLIC)
    assert client.get(reverse("run_detail", args=[run.pk])).status_code == 200
    assert client.get(reverse("creation_detail", args=[run.creation_id])).status_code == 200


def test_the_artifacts_fragment_renders_each_kind(team: Team, client: Client) -> None:
    run = a_run(team)
    html = signed_in(client, team.member).get(reverse("run_artifacts", args=[run.pk])).content.decode()
    assert '<img class="artifact-image"' in html
    assert "notes.md" in html
    assert "<html" not in html  # a fragment, for htmx
