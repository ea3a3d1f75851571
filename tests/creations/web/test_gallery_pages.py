"""The workspace and public galleries: what each role sees, filters and pages."""

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Visibility
from tests.support.artifacts import Output
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes
from tests.support.pages import a_run, signed_in

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


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
