"""Embedding a shared artifact in another site: its embed page (any site may frame it, with a
"Made with Atelier" link back), the iframe snippet, and the oEmbed endpoint (https://oembed.com),
all on the artifact origin."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client

from creations.models import Run
from creations.sharing.services import share_link_revoke
from creations.sharing.tokens import share_embed_url
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes
from tests.support.sharing import share, visit

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]
MAP = b"<!doctype html><html><head><title>Map</title></head><body><p>Tokyo</p></body></html>"


@pytest.fixture
def run(team: Team) -> Run:
    return finished_run(
        workspace=team.workspace,
        author=team.member,
        outputs=[Output("map.html", MAP), Output("poster.png", png_bytes(64, 40))],
    )


def oembed(client: Client, url: str, **params: str) -> Any:
    query = "&".join(f"{name}={quote(value, safe='')}" for name, value in {"url": url, **params}.items())
    return visit(client, f"http://127.0.0.1:8000/oembed?{query}")


def test_an_embed_shows_the_artifact_with_a_link_back_and_any_site_may_frame_it(team: Team, run: Run) -> None:
    made = share(run.creation, team.member)
    page = run.artifacts.get(path="map.html")
    response = visit(Client(), share_embed_url(made.token or "", page.pk))
    assert response.status_code == 200
    html = response.content.decode()
    framed = r'<iframe class="artifact-frame" sandbox="allow-scripts" src="http://127.0.0.1:8000/s/[^/"]+/f/map.html"'
    assert re.search(framed, html)
    assert 'href="http://localhost:8000/"' in html
    assert "Made with Atelier" in html
    assert "frame-ancestors *" in response["Content-Security-Policy"]
    assert "script-src" not in response["Content-Security-Policy"]
    assert not response.has_header("X-Frame-Options")
    assert not response.cookies
    made.link.refresh_from_db()
    assert made.link.view_count == 1


def test_oembed_answers_a_rich_embed_of_the_shared_artifact(team: Team, run: Run) -> None:
    made = share(run.creation, team.member)
    picture = run.artifacts.get(path="poster.png")
    embed_url = share_embed_url(made.token or "", picture.pk)
    response = oembed(Client(), embed_url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Access-Control-Allow-Origin"] == "*"
    document = response.json()
    assert document["version"] == "1.0"
    assert document["type"] == "rich"
    assert document["provider_name"] == "Atelier"
    assert document["provider_url"] == "http://localhost:8000/"
    assert (document["width"], document["height"]) == (640, 480)
    assert document["html"].startswith(f'<iframe src="{embed_url}" width="640" height="480" ')
    assert 'sandbox="allow-scripts allow-popups allow-popups-to-escape-sandbox"' in document["html"]
    assert not response.cookies


def test_oembed_of_the_share_page_embeds_its_principal_file_within_the_bounds_asked(team: Team, run: Run) -> None:
    made = share(run.creation, team.member)
    document = oembed(Client(), made.url or "", maxwidth="400", maxheight="1000").json()
    page = run.artifacts.get(path="map.html")
    assert share_embed_url(made.token or "", page.pk) in document["html"]
    assert (document["width"], document["height"]) == (400, 300)  # 800 by 600 scaled to fit, its shape kept
    assert 'width="400" height="300"' in document["html"]


def test_oembed_refuses_what_it_cannot_answer(team: Team, run: Run) -> None:
    made = share(run.creation, team.member)
    stranger = Client()
    assert oembed(stranger, made.url or "", format="xml").status_code == 501
    assert visit(stranger, "http://127.0.0.1:8000/oembed").status_code == 400
    assert oembed(stranger, made.url or "", maxwidth="wide").status_code == 400
    assert oembed(stranger, "https://example.com/s/x/").status_code == 404
    assert oembed(stranger, "http://127.0.0.1:8000/r/abc/poster.png").status_code == 404
    assert oembed(stranger, "http://127.0.0.1:8000/s/" + "A" * 43 + "/").status_code == 404
    share_link_revoke(link=made.link, user=team.member)
    gone = oembed(stranger, made.url or "")
    assert gone.status_code == 410
    assert "turned off" in gone.json()["error"]


def test_a_revoked_embed_says_so_inside_the_frame(team: Team, run: Run) -> None:
    made = share(run.creation, team.member)
    picture = run.artifacts.get(path="poster.png")
    share_link_revoke(link=made.link, user=team.member)
    response = visit(Client(), share_embed_url(made.token or "", picture.pk))
    assert response.status_code == 410
    assert "frame-ancestors *" in response["Content-Security-Policy"]  # shown in the embedding page, not blocked
    assert "This link no longer works" in response.content.decode()


def test_the_share_page_names_its_oembed_endpoint(team: Team, run: Run) -> None:
    made = share(run.creation, team.member)
    html = visit(Client(), made.url or "").content.decode()
    assert '<link rel="alternate" type="application/json+oembed" href="http://127.0.0.1:8000/oembed?url=' in html
