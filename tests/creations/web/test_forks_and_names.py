"""What a creation is called and where it came from: a fork is titled as one until renamed and
links its origin; whoever may work on a creation renames it (page and API); versions and runs
say when and by whom wherever they are listed."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Creation, Visibility
from tests.support.api import ApiClient, token_for
from tests.support.factories import ArtifactFactory, RunFactory
from tests.support.fixtures.accounts import Team
from tests.support.pages import a_run, signed_in
from tests.support.sharing import share, visit

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


def _fork(team: Team, client: Client, origin: Creation) -> Creation:
    signed_in(client, team.member).post(reverse("creation_fork", args=[origin.pk]), {"brief": "The same, in red"})
    return Creation.objects.get(forked_from=origin)


def test_a_fork_is_titled_as_a_fork_and_links_its_origin(team: Team, client: Client) -> None:
    origin = a_run(team, brief="A poster, blue").creation
    Creation.objects.filter(pk=origin.pk).update(title="Summer poster")
    fork = _fork(team, client, Creation.objects.get(pk=origin.pk))
    assert fork.title == "Fork of Summer poster"
    page = client.get(reverse("creation_detail", args=[fork.pk])).content.decode()
    assert "<h1>Fork of Summer poster</h1>" in page
    origin_line = re.search(r'data-role="fork-origin">(.*?)</p>', page)
    assert origin_line is not None
    assert origin_line.group(1) == f'A fork of <a href="/creations/{origin.pk}/">Summer poster</a>, by alice'


def test_a_fork_does_not_name_an_origin_the_viewer_cannot_see(team: Team, client: Client) -> None:
    origin = a_run(team, brief="A secret plan", visibility=Visibility.PRIVATE).creation
    fork = Creation.objects.create(
        workspace=team.workspace, author=team.member, title="Fork of A secret plan", brief="x", forked_from=origin
    )
    page = signed_in(client, team.member).get(reverse("creation_detail", args=[fork.pk])).content.decode()
    assert "A fork of a creation you cannot see" in page
    assert f"/creations/{origin.pk}/" not in page


def test_a_member_renames_a_creation_and_a_viewer_may_not(team: Team, client: Client) -> None:
    creation = a_run(team).creation
    url = reverse("creation_rename", args=[creation.pk])
    viewer = signed_in(Client(), team.viewer)
    assert 'data-role="rename"' not in viewer.get(reverse("creation_detail", args=[creation.pk])).content.decode()
    refused = viewer.post(url, {"title": "Viewer's name"})
    assert refused.status_code == 403
    assert "Only owners, admins and members of this workspace can rename its creations." in refused.content.decode()

    member = signed_in(client, team.member)
    assert 'data-role="rename"' in member.get(reverse("creation_detail", args=[creation.pk])).content.decode()
    done = member.post(url, {"title": "  The harbour at night  "}, follow=True)
    assert "It is called “The harbour at night” now." in done.content.decode()
    assert Creation.objects.get(pk=creation.pk).title == "The harbour at night"


@pytest.mark.parametrize(
    ("title", "said"),
    [("   ", "This field is required."), ("x" * 201, "The title is 201 characters long, over its limit of 200")],
)
def test_a_name_that_cannot_be_one_is_refused_with_a_message(team: Team, client: Client, title: str, said: str) -> None:
    creation = a_run(team).creation
    response = signed_in(client, team.member).post(reverse("creation_rename", args=[creation.pk]), {"title": title})
    assert response.status_code == 400
    html = response.content.decode()
    assert "It was not renamed." in html
    assert said in html
    assert Creation.objects.get(pk=creation.pk).title == creation.title


def test_the_api_renames_a_creation_by_any_of_its_runs(team: Team) -> None:
    run = a_run(team)
    response = ApiClient(token_for(team.member)).post(f"/api/v1/runs/{run.pk}/rename", {"title": "Harbour"})
    assert response.status_code == 200
    assert response.json()["title"] == "Harbour"
    blank = ApiClient(token_for(team.member)).post(f"/api/v1/runs/{run.pk}/rename", {"title": " "})
    assert blank.status_code == 422
    assert "blank" in blank.json()["detail"]
    assert Creation.objects.get(pk=run.creation_id).title == "Harbour"


def test_runs_and_versions_say_when_and_by_whom_where_they_are_listed(team: Team, client: Client) -> None:
    first = a_run(team)
    second = RunFactory.create(finished=True, creation=first.creation, started_by=team.member)
    ArtifactFactory.create(run=second, path="poster-v2.png")
    Creation.objects.filter(pk=first.creation_id).update(shown_run=second)
    when = second.created_at.strftime("%-d %b %Y")
    member = signed_in(client, team.member)

    dashboard = member.get(reverse("workspace_dashboard", args=[team.workspace.slug])).content.decode()
    lines = re.findall(r'<span class="muted run-meta-line">(.*?)</span>', dashboard, re.S)
    assert [re.sub(r"<[^>]+>", "", line).split(" · ")[:3] for line in lines][:2] == [
        ["v2", second.created_at.strftime("%-d %b %Y, %H:%M"), "bob"],
        ["v1", first.created_at.strftime("%-d %b %Y, %H:%M"), "alice"],
    ]
    run_page = member.get(reverse("run_detail", args=[second.pk])).content.decode()
    assert re.search(rf'data-role="asked-at"><time datetime="[^"]+">{when}, ', run_page)
    gallery = member.get(reverse("workspace_gallery", args=[team.workspace.slug])).content.decode()
    assert f"by bob · {when}" in gallery  # the version the gallery shows: v2, asked for by bob

    made = share(first.creation, team.owner)
    assert made.url is not None
    shared = visit(Client(), made.url).content.decode()
    assert f"Version 2 · {when} · by bob" in shared
