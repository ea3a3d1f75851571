"""The new creation page: its form, models and starters, and what bad input gets, for each role."""

import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from creations.models import Run
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in
from workspaces.models import ModelEndpoint
from workspaces.services import workspace_create

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


def new_url(team: Team) -> str:
    return reverse("creation_new", args=[team.workspace.slug])


def test_the_new_creation_page_offers_the_demo_model_and_the_workspaces_models(team: Team, client: Client) -> None:
    ModelEndpoint.objects.create(
        workspace=team.workspace, name="House GPT", base_url="http://127.0.0.1:9/v1", model="m"
    )
    ModelEndpoint.objects.create(
        workspace=team.workspace, name="Retired", base_url="http://127.0.0.1:9/v1", model="m", is_enabled=False
    )
    response = signed_in(client, team.member).get(new_url(team))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Demo model (replay" in html
    assert "House GPT" in html
    assert "Retired" not in html
    assert 'type="file"' in html
    assert "multiple" in html
    assert "Advanced limits" in html
    assert "default-src 'self'" in response["Content-Security-Policy"]


def test_a_member_submits_a_brief_and_lands_on_the_live_run(team: Team, client: Client) -> None:
    upload = SimpleUploadedFile("event.json", b'{"name": "Launch"}', content_type="application/json")
    response = signed_in(client, team.member).post(
        new_url(team),
        {
            "brief": "A poster for this event",
            "visibility": "workspace",
            "model": "",
            "max_steps": "5",
            "uploads": upload,
        },
    )
    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("run_detail", args=[run.pk])
    assert run.creation.author == team.member
    assert run.creation.max_steps == 5
    assert [f.name for f in run.creation.inputs.all()] == ["event.json"]


def test_a_starter_brief_fills_the_form_without_javascript(team: Team, client: Client) -> None:
    from creations.web.starters import starters

    available = starters()
    assert len(available) == 5, "the five showcase kinds have starter briefs"
    first = available[0]
    html = signed_in(client, team.member).get(new_url(team), {"starter": first.kind}).content.decode()
    assert first.title in html
    assert f'value="{first.kind}"' in html


def test_a_starter_with_inputs_attaches_them(team: Team, client: Client) -> None:
    from creations.web.starters import starters

    starter = next((s for s in starters() if s.inputs), None)
    if starter is None:
        pytest.fail("no showcase brief attaches input files any more; drop this test")
    signed_in(client, team.member).post(
        new_url(team), {"brief": starter.brief, "starter": starter.kind, "visibility": "workspace", "model": ""}
    )
    names = {f.name for f in Run.objects.get().creation.inputs.all()}
    assert names == set(starter.inputs)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"brief": "   "}, "This field is required"),
        ({"brief": "x", "max_steps": "0"}, "greater than or equal to 1"),
        ({"brief": "x", "max_steps": "100000"}, "less than or equal to"),
        ({"brief": "x", "max_tokens": "lots"}, "Enter a whole number"),
        ({"brief": "x", "model": "999999"}, "Select a valid choice"),
        ({"brief": "x", "visibility": "everyone"}, "Select a valid choice"),
    ],
)
def test_bad_input_gets_clear_form_errors_not_a_500(
    team: Team, client: Client, data: dict[str, str], message: str
) -> None:
    response = signed_in(client, team.member).post(new_url(team), {"visibility": "workspace", **data})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Run.objects.exists()


def test_files_of_a_refused_type_or_size_are_explained(team: Team, client: Client, settings: Any) -> None:
    settings.UPLOAD_MAX_FILE_BYTES = 10
    files = [SimpleUploadedFile("tool.exe", b"MZ"), SimpleUploadedFile("big.csv", b"a,b\n" * 10)]
    response = signed_in(client, team.member).post(
        new_url(team), {"brief": "x", "visibility": "workspace", "uploads": files}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "tool.exe: this type of file is not accepted" in html
    assert "big.csv: too large" in html


def test_a_model_from_another_workspace_cannot_be_picked(team: Team, client: Client) -> None:
    elsewhere = workspace_create(name="Elsewhere", owner=team.outsider)
    foreign = ModelEndpoint.objects.create(
        workspace=elsewhere, name="Theirs", base_url="http://127.0.0.1:9/v1", model="m"
    )
    response = signed_in(client, team.member).post(
        new_url(team), {"brief": "x", "visibility": "workspace", "model": str(foreign.pk)}
    )
    assert response.status_code == 400
    assert not Run.objects.exists()


def test_viewers_are_told_they_cannot_create(team: Team, client: Client) -> None:
    client = signed_in(client, team.viewer)
    assert client.get(new_url(team)).status_code == 403
    assert client.post(new_url(team), {"brief": "x", "visibility": "workspace"}).status_code == 403
    assert not Run.objects.exists()


def test_outsiders_cannot_open_the_new_creation_page(team: Team, client: Client) -> None:
    assert signed_in(client, team.outsider).get(new_url(team)).status_code == 404


def test_the_model_picker_marks_a_model_whose_last_connection_test_failed(team: Team, client: Client) -> None:
    ModelEndpoint.objects.create(
        workspace=team.workspace, name="Works", base_url="http://127.0.0.1:9/v1", model="m", check_verdict="works"
    )
    ModelEndpoint.objects.create(
        workspace=team.workspace, name="Broken", base_url="http://127.0.0.1:9/v1", model="m", check_verdict="wrong_key"
    )
    ModelEndpoint.objects.create(workspace=team.workspace, name="Untested", base_url="http://127.0.0.1:9/v1", model="m")
    html = signed_in(client, team.member).get(new_url(team)).content.decode()
    options = re.findall(r"<option value=\"\d+\"[^>]*>([^<]+)</option>", html)
    assert options == ["Broken (m) \u2014 last connection test failed: Wrong key", "Untested (m)", "Works (m)"]


def test_the_form_says_before_submit_that_the_demo_model_replays_its_showcase_briefs_only(
    team: Team, client: Client
) -> None:
    html = signed_in(client, team.member).get(new_url(team)).content.decode()
    note = re.search(r'<p class="demo-note" data-role="demo-note">(.*?)</p>', html, re.S)
    assert note is not None
    assert "only replays its five showcase briefs" in note.group(1)
    assert 'data-max-files="' in html
    assert 'data-max-total-bytes="' in html
