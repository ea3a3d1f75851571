"""What anyone with a share link gets, on the artifact origin: the version's files without an
account, counted; nothing once the link is revoked or expired (410 Gone, at once); never a
cookie; and never another creation's files, whatever ids or paths are tried through the link."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from django.utils import timezone

from creations.models import Run, Visibility
from creations.runs.state import creation_show_version
from creations.sharing.models import ShareLink
from creations.sharing.services import share_link_revoke
from creations.sharing.tokens import share_embed_url, share_file_url
from tests.support.artifacts import Output, add_artifact, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import hostile_html, png_bytes
from tests.support.sharing import body, share, visit
from workspaces.models import Membership, Role

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]
PLATFORM = "http://localhost:8000"
POSTER = png_bytes(64, 40)


@pytest.fixture
def poster(team: Team) -> Run:
    """A member's finished creation: a poster and a page."""
    return finished_run(
        workspace=team.workspace,
        author=team.member,
        brief="A poster for the fair",
        outputs=[Output("poster.png", POSTER), Output("page.html", hostile_html(PLATFORM))],
    )


@pytest.fixture
def stranger() -> Client:
    return Client()


def views(link: ShareLink) -> int:
    link.refresh_from_db()
    return link.view_count


def test_anyone_with_the_link_sees_the_files_and_is_counted(team: Team, poster: Run, stranger: Client) -> None:
    made = share(poster.creation, team.member)
    assert made.url is not None
    assert made.url.startswith("http://127.0.0.1:8000/s/")  # the artifact origin, never the platform's

    page = visit(stranger, made.url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "poster.png" in html
    assert "page.html" in html
    assert "Made with Atelier" in html
    assert views(made.link) == 1

    # Its files come from the link itself, and opening them is not another visit.
    picture = visit(stranger, share_file_url(made.token or "", "poster.png"))
    assert picture.status_code == 200
    assert body(picture) == POSTER
    assert views(made.link) == 1
    assert visit(stranger, made.url).status_code == 200
    assert views(made.link) == 2
    assert visit(stranger, made.url, method="head").status_code == 200
    assert views(made.link) == 2  # HEAD (a link checker) is not a visit


def test_the_page_sets_no_cookie_even_for_a_signed_in_visitor(team: Team, poster: Run, client: Client) -> None:
    made = share(poster.creation, team.member)
    picture = poster.artifacts.get(path="poster.png")
    client.force_login(team.member)  # the browser holds the platform's session cookie
    token = made.token or ""
    for url in (made.url or "", share_file_url(token, "page.html"), share_embed_url(token, picture.pk)):
        response = visit(client, url)
        assert response.status_code == 200, url
        assert "sessionid" not in response.cookies, url
        assert "csrftoken" not in response.cookies, url
        assert not response.has_header("Set-Cookie"), url
        assert not response.cookies, url


def test_the_page_runs_no_script_and_is_not_framed(team: Team, poster: Run, stranger: Client) -> None:
    made = share(poster.creation, team.member)
    response = visit(stranger, made.url or "")
    csp = {d.strip().split(" ")[0]: d.strip() for d in response["Content-Security-Policy"].split(";")}
    assert csp["default-src"] == "default-src 'none'"
    assert "script-src" not in csp
    assert csp["frame-ancestors"] == "frame-ancestors 'none'"
    assert response["Cache-Control"] == "no-store"
    assert b"<script" not in response.content


def test_a_shared_page_runs_only_in_the_sandbox_it_has_everywhere(team: Team, poster: Run, stranger: Client) -> None:
    made = share(poster.creation, team.member)
    response = visit(stranger, share_file_url(made.token or "", "page.html"))
    csp = {d.strip().split(" ")[0]: d.strip() for d in response["Content-Security-Policy"].split(";")}
    assert csp["sandbox"] == "sandbox allow-scripts"  # an opaque origin: no cookies, no storage
    assert csp["connect-src"] == "connect-src 'none'"
    assert "allow-same-origin" not in response["Content-Security-Policy"]
    assert csp["frame-ancestors"] == "frame-ancestors *"  # an embed frames it, on any site
    assert response["Content-Type"] == "text/html; charset=utf-8"


def test_an_expired_link_is_gone(team: Team, poster: Run, stranger: Client) -> None:
    made = share(poster.creation, team.member, expires_in_days=7)
    assert visit(stranger, made.url or "").status_code == 200
    ShareLink.objects.filter(pk=made.link.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    page = visit(stranger, made.url or "")
    assert page.status_code == 410
    assert "expired" in page.content.decode()
    assert visit(stranger, share_file_url(made.token or "", "poster.png")).status_code == 410
    assert views(made.link) == 1


def test_a_revoked_link_is_gone_at_once_files_and_embeds_too(team: Team, poster: Run, stranger: Client) -> None:
    made = share(poster.creation, team.member)
    poster_artifact = poster.artifacts.get(path="poster.png")
    assert visit(stranger, made.url or "").status_code == 200  # the page is open in someone's browser

    share_link_revoke(link=made.link, user=team.member)

    page = visit(stranger, made.url or "")
    assert page.status_code == 410
    assert "turned off" in page.content.decode()
    assert visit(stranger, share_file_url(made.token or "", "poster.png")).status_code == 410
    assert visit(stranger, share_embed_url(made.token or "", poster_artifact.pk)).status_code == 410


def test_a_link_cannot_reach_another_creations_files(team: Team, poster: Run, stranger: Client) -> None:
    made = share(poster.creation, team.member)
    token = made.token or ""
    other = finished_run(
        workspace=team.workspace,
        author=team.member,
        brief="Salaries",
        visibility=Visibility.PRIVATE,
        outputs=[Output("salaries.png", png_bytes(20, 20)), Output("poster.png", png_bytes(30, 30))],
    )
    for artifact in other.artifacts.all():
        assert visit(stranger, share_embed_url(token, artifact.pk)).status_code == 404
        oembed = f"http://127.0.0.1:8000/oembed?url={share_embed_url(token, artifact.pk)}"
        assert visit(stranger, oembed).status_code == 404
    assert visit(stranger, share_file_url(token, "salaries.png")).status_code == 404
    # The same path in both: the link's own file, never the other's.
    assert body(visit(stranger, share_file_url(token, "poster.png"))) == POSTER
    for sneaky in ("../salaries.png", f"../../r/x/{other.pk}/salaries.png", "/salaries.png"):
        assert visit(stranger, share_file_url(token, sneaky)).status_code == 404


def test_a_pinned_link_keeps_its_version_the_other_follows_a_restore(team: Team, poster: Run, stranger: Client) -> None:
    creation = poster.creation
    second = finished_run(workspace=team.workspace, author=team.member, outputs=[])
    Run.objects.filter(pk=second.pk).update(creation=creation, version=2)
    add_artifact(second, Output("poster-v2.png", png_bytes(80, 50)))
    creation_show_version(creation_id=creation.pk, run_id=second.pk)
    pinned = share(creation, team.member, run=poster)
    shown = share(creation, team.member)

    assert "poster-v2.png" in visit(stranger, shown.url or "").content.decode()
    assert "poster-v2.png" not in visit(stranger, pinned.url or "").content.decode()
    assert visit(stranger, share_file_url(pinned.token or "", "poster-v2.png")).status_code == 404
    v2_picture = second.artifacts.get()
    assert visit(stranger, share_embed_url(pinned.token or "", v2_picture.pk)).status_code == 404

    creation_show_version(creation_id=creation.pk, run_id=poster.pk)  # a restore of v1
    page = visit(stranger, shown.url or "").content.decode()
    assert "poster.png" in page
    assert "poster-v2.png" not in page


def test_a_link_stops_when_its_maker_may_no_longer_share(team: Team, poster: Run, stranger: Client) -> None:
    made = share(poster.creation, team.member)
    Membership.objects.filter(workspace=team.workspace, user=team.member).update(role=Role.VIEWER)
    page = visit(stranger, made.url or "")
    assert page.status_code == 410
    assert "may no longer share" in page.content.decode()
    Membership.objects.filter(workspace=team.workspace, user=team.member).update(role=Role.MEMBER)
    assert visit(stranger, made.url or "").status_code == 200
    Membership.objects.filter(workspace=team.workspace, user=team.member).delete()
    assert visit(stranger, made.url or "").status_code == 410


def test_an_unknown_or_malformed_token_is_not_found(stranger: Client) -> None:
    for token in ("A" * 43, "short", "x" * 200):
        assert visit(stranger, f"http://127.0.0.1:8000/s/{token}/").status_code == 404


def test_the_platform_origin_serves_no_share_page(team: Team, poster: Run, client: Client) -> None:
    made = share(poster.creation, team.member)
    on_platform = (made.url or "").replace("127.0.0.1:8000", "localhost:8000")
    client.force_login(team.member)
    assert visit(client, on_platform).status_code == 404
    assert views(made.link) == 0


def test_documents_link_the_links_own_files(team: Team, poster: Run, stranger: Client) -> None:
    notes = add_artifact(poster, Output("notes.md", b"# Notes\n\n![the poster](poster.png)\n"))
    notes.rendered.save("notes.html", ContentFile(b'<h1>Notes</h1><p><img src="atelier-run-file:poster.png"></p>'))
    made = share(poster.creation, team.member)
    html = visit(stranger, made.url or "").content.decode()
    assert f'src="{share_file_url(made.token or "", "poster.png")}"' in html
    assert "/r/" not in html  # no link signed for a viewer: visitors have none
