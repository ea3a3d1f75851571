"""Every page, for the owner, a member, a viewer, an outsider and (where public) anyone."""

import io
import json
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from creations.models import Creation, Run, RunEvent, Visibility
from creations.usage.ledger import usage_record_write
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import hostile_markdown, png_bytes
from workspaces.models import ModelEndpoint
from workspaces.services import workspace_create

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


def signed_in(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


def a_run(team: Team, **kwargs: Any) -> Run:
    outputs = kwargs.pop(
        "outputs", [Output("poster.png", png_bytes()), Output("notes.md", b"# Notes\n\nHello *there*")]
    )
    return finished_run(workspace=team.workspace, author=team.owner, outputs=outputs, **kwargs)


# --- dashboard -------------------------------------------------------------------


def test_the_dashboard_shows_recent_runs_and_this_months_usage(team: Team, client: Client) -> None:
    run = a_run(team, brief="A calm piano piece")
    Run.objects.filter(pk=run.pk).update(prompt_tokens=1200, completion_tokens=300)
    usage_record_write(run_id=run.pk)  # what ending it writes: the dashboard reads the usage ledger
    response = signed_in(client, team.member).get(reverse("workspace_dashboard", args=[team.workspace.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "A calm piano piece" in html
    assert "Runs ended this month" in html
    assert "1.5k" in html
    assert reverse("creation_new", args=[team.workspace.slug]) in html


def test_the_dashboard_lists_whats_running(team: Team, client: Client) -> None:
    creation = Creation.objects.create(workspace=team.workspace, author=team.owner, brief="A countdown video")
    Run.objects.create(creation=creation)
    html = signed_in(client, team.owner).get(reverse("workspace_dashboard", args=[team.workspace.slug])).content
    assert b"Running now" in html
    assert b"A countdown video" in html


def test_outsiders_do_not_see_a_workspace_dashboard(team: Team, client: Client) -> None:
    response = signed_in(client, team.outsider).get(reverse("workspace_dashboard", args=[team.workspace.slug]))
    assert response.status_code == 404


# --- new creation ------------------------------------------------------------------


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


# --- run page ------------------------------------------------------------------


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


# --- creation page -------------------------------------------------------------


def test_a_document_without_a_stored_rendering_is_shown_as_escaped_text(team: Team, client: Client) -> None:
    """What a page shows when the preview sandbox could not render a document: its text, never parsed."""
    run = a_run(team, outputs=[Output("report.md", b"# Title\n\n<script>alert(1)</script>")])
    html = signed_in(client, team.member).get(reverse("creation_detail", args=[run.creation_id])).content.decode()
    assert "# Title" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_creation_page_renders_markdown_sanitized(team: Team, client: Client, sandbox_image: str) -> None:
    run = a_run(team, outputs=[Output("report.md", hostile_markdown("http://localhost:8000"))], previews=True)
    response = signed_in(client, team.member).get(reverse("creation_detail", args=[run.creation_id]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Quarterly report" in html
    assert "<table>" in html
    assert "__pwned" not in html
    assert "javascript:" not in html.lower()
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_the_creation_page_offers_rerun_fork_zip_and_json(team: Team, client: Client) -> None:
    run = a_run(team)
    html = signed_in(client, team.member).get(reverse("creation_detail", args=[run.creation_id])).content.decode()
    for name in ("creation_rerun", "creation_fork"):
        assert reverse(name, args=[run.creation_id]) in html
    for name in ("run_download_zip", "run_trajectory_json"):
        assert reverse(name, args=[run.pk]) in html


def test_private_creations_are_for_their_author_only(team: Team, client: Client) -> None:
    run = a_run(team, visibility=Visibility.PRIVATE)
    url = reverse("creation_detail", args=[run.creation_id])
    assert signed_in(client, team.owner).get(url).status_code == 200
    assert signed_in(Client(), team.member).get(url).status_code == 404


def test_a_member_runs_a_creation_again(team: Team, client: Client) -> None:
    run = a_run(team)
    response = signed_in(client, team.member).post(reverse("creation_rerun", args=[run.creation_id]))
    again = Run.objects.exclude(pk=run.pk).get()
    assert again.creation_id == run.creation_id
    assert response["Location"] == reverse("run_detail", args=[again.pk])


def test_a_viewer_cannot_run_a_creation_again(team: Team, client: Client) -> None:
    run = a_run(team)
    response = signed_in(client, team.viewer).post(reverse("creation_rerun", args=[run.creation_id]), follow=True)
    assert Run.objects.count() == 1
    assert "Only owners, admins and members" in response.content.decode()


def test_an_outsider_cannot_rerun_or_fork(team: Team, client: Client) -> None:
    run = a_run(team)
    client = signed_in(client, team.outsider)
    assert client.post(reverse("creation_rerun", args=[run.creation_id])).status_code == 404
    assert client.post(reverse("creation_fork", args=[run.creation_id]), {"brief": "mine"}).status_code == 404
    assert Run.objects.count() == 1


def test_a_member_forks_with_an_edited_brief(team: Team, client: Client) -> None:
    run = a_run(team, brief="A poster, blue")
    signed_in(client, team.member).post(reverse("creation_fork", args=[run.creation_id]), {"brief": "A poster, red"})
    fork = Creation.objects.get(forked_from=run.creation)
    assert fork.brief == "A poster, red"
    assert fork.author == team.member
    assert fork.runs.count() == 1


def test_a_fork_without_a_brief_is_refused_with_a_message(team: Team, client: Client) -> None:
    run = a_run(team)
    response = signed_in(client, team.member).post(
        reverse("creation_fork", args=[run.creation_id]), {"brief": ""}, follow=True
    )
    assert "The fork was not started" in response.content.decode()
    assert not Creation.objects.filter(forked_from=run.creation).exists()


def test_download_all_is_a_zip_of_the_runs_files(team: Team, client: Client) -> None:
    run = a_run(team)
    response = signed_in(client, team.member).get(reverse("run_download_zip", args=[run.pk]))
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"].startswith("attachment;")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response)))
    assert sorted(archive.namelist()) == ["notes.md", "poster.png"]
    assert archive.read("poster.png") == png_bytes()


def test_the_trajectory_exports_as_json(team: Team, client: Client) -> None:
    run = a_run(team)
    response = signed_in(client, team.member).get(reverse("run_trajectory_json", args=[run.pk]))
    data = json.loads(b"".join(response))  # streamed a page of events at a time
    assert response["Content-Disposition"].startswith("attachment;")
    assert data["run"]["id"] == run.pk
    assert data["events"][0]["kind"] == "step_started"
    assert {a["path"] for a in data["artifacts"]} == {"poster.png", "notes.md"}


def test_an_artifact_has_its_own_page(team: Team, client: Client, sandbox_image: str) -> None:
    artifact = a_run(team, previews=True).artifacts.get(path="notes.md")
    url = reverse("artifact_detail", args=[artifact.pk])
    assert b"<em>there</em>" in signed_in(client, team.member).get(url).content
    assert signed_in(Client(), team.outsider).get(url).status_code == 404


# --- galleries -----------------------------------------------------------------


def test_the_workspace_gallery_shows_what_members_may_see(team: Team, client: Client) -> None:
    a_run(team, outputs=[Output("shared.png", png_bytes())])
    a_run(team, outputs=[Output("secret.png", png_bytes())], visibility=Visibility.PRIVATE)
    url = reverse("workspace_gallery", args=[team.workspace.slug])
    member_html = signed_in(client, team.member).get(url).content.decode()
    assert "shared.png" in member_html
    assert "secret.png" not in member_html
    owner_html = signed_in(Client(), team.owner).get(url).content.decode()
    assert "secret.png" in owner_html
    assert signed_in(Client(), team.outsider).get(url).status_code == 404


def test_the_gallery_filters_by_kind_and_paginates(team: Team, client: Client, settings: Any) -> None:
    settings.GALLERY_PAGE_SIZE = 2
    a_run(team, outputs=[Output(f"p{i}.png", png_bytes()) for i in range(3)] + [Output("a.md", b"# A")])
    url = reverse("workspace_gallery", args=[team.workspace.slug])
    client = signed_in(client, team.member)
    first = client.get(url, {"kind": "image"})
    images = first.content.decode()
    assert "a.md" not in images
    assert images.count('class="tile ') == 2
    assert "Older →" in images
    second = client.get(url + first.context["next_page_url"]).content.decode()
    assert second.count('class="tile ') == 1
    assert "Older →" not in second
    shown = {name for name in ("p0.png", "p1.png", "p2.png") if name in images or name in second}
    assert shown == {"p0.png", "p1.png", "p2.png"}
    assert client.get(url, {"kind": "nonsense", "older": "x"}).status_code == 200


def test_the_gallery_filter_answers_htmx_with_just_the_grid(team: Team, client: Client) -> None:
    a_run(team)
    url = reverse("workspace_gallery", args=[team.workspace.slug])
    html = signed_in(client, team.member).get(url, {"kind": "image"}, headers={"HX-Request": "true"}).content
    assert b"gallery-grid" in html
    assert b"<html" not in html


def test_the_public_gallery_shows_only_public_creations_to_anyone(team: Team, client: Client) -> None:
    a_run(team, outputs=[Output("public.png", png_bytes())], visibility=Visibility.PUBLIC)
    a_run(team, outputs=[Output("internal.png", png_bytes())])
    html = client.get(reverse("public_gallery")).content.decode()
    assert "public.png" in html
    assert "internal.png" not in html
