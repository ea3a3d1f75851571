"""A creation's page: rendering, run again, fork, exports and artifact pages, for each role."""

import io
import json
import re
import zipfile

import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Creation, Run, Visibility
from tests.support.artifacts import Output
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import hostile_markdown, png_bytes
from tests.support.pages import a_run, signed_in

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


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


def test_every_artifact_page_is_headed_by_its_file_name(team: Team, client: Client) -> None:
    """A screen reader's list of headings, or a person jumping to the first, finds what the page is about."""
    outputs = [
        Output("poster.png", png_bytes()),
        Output("page.html", b"<!doctype html><title>Page</title><p>hi</p>"),
        Output("notes.md", b"# Notes\n\nHello"),
        Output("data.csv", b"a,b\n1,2\n"),
        Output("report.pdf", b"%PDF-1.4\n%%EOF\n"),
        Output("blob.bin", bytes(range(256))),
    ]
    run = a_run(team, outputs=outputs)
    signed_in(client, team.member)
    kinds = set()
    for artifact in run.artifacts.all():
        html = client.get(reverse("artifact_detail", args=[artifact.pk])).content.decode()
        headings = re.findall(r"<h1\b[^>]*>(.*?)</h1>", html, flags=re.S)
        assert len(headings) == 1, f"{artifact.path}: {headings}"
        assert artifact.path in headings[0]
        kinds.add(artifact.kind)
    assert len(kinds) >= 5, kinds  # images, pages, documents, PDFs and other files alike
