"""The platform's pages for share links: a creation's share dialog (the link shown once, each
file's embed snippet, its links listed and revoked) and a workspace's list, by role."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Run, Visibility
from creations.sharing.models import ShareLink
from creations.sharing.tokens import token_hash
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team, make_user
from tests.support.media_samples import png_bytes
from tests.support.sharing import share, visit
from workspaces.models import Role
from workspaces.services import membership_add

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(team: Team) -> Run:
    return finished_run(
        workspace=team.workspace, author=team.member, brief="A poster", outputs=[Output("poster.png", png_bytes())]
    )


def test_a_member_makes_a_link_shown_once_with_its_embed_snippet(team: Team, run: Run, client: Client) -> None:
    client.force_login(team.member)
    url = reverse("creation_share", args=[run.creation_id])
    response = client.post(url, {"version": "shown", "expires_in_days": "7", "label": "for the printer"})
    assert response.status_code == 200
    html = response.content.decode()
    link = ShareLink.objects.get()
    (shown,) = re.findall(r'value="(http://127\.0\.0\.1:8000/s/[^"]+)" aria-label="Share link"', html)
    token = shown.rsplit("/s/", 1)[1].strip("/")
    assert link.token_hash == token_hash(token)
    assert token not in str(ShareLink.objects.values().get())  # only its hash is kept
    assert (link.label, link.created_by, link.run) == ("for the printer", team.member, None)
    assert link.expires_at is not None
    assert "poster.png" in html
    assert f"{shown}embed/{run.artifacts.get().pk}/" in html.replace("&quot;", '"')  # the iframe snippet
    assert visit(Client(), shown).status_code == 200

    again = client.get(url).content.decode()
    assert token not in again  # never shown again
    assert f"…{link.token_hint}" in again
    assert "for the printer" in again


def test_a_version_can_be_pinned(team: Team, run: Run, client: Client) -> None:
    client.force_login(team.member)
    url = reverse("creation_share", args=[run.creation_id])
    assert f'value="{run.pk}" selected' in client.get(f"{url}?run={run.pk}").content.decode()
    client.post(url, {"version": str(run.pk), "expires_in_days": ""})
    assert ShareLink.objects.get().run == run


def test_bad_input_makes_nothing_and_says_why(team: Team, run: Run, client: Client) -> None:
    client.force_login(team.member)
    url = reverse("creation_share", args=[run.creation_id])
    response = client.post(url, {"version": "9999", "expires_in_days": "3", "label": "x" * 101})
    assert response.status_code == 400
    html = response.content.decode()
    assert "No link was made." in html
    assert "Select a valid choice" in html
    assert not ShareLink.objects.exists()


def test_a_viewer_is_told_who_may_share(team: Team, run: Run, client: Client) -> None:
    client.force_login(team.viewer)
    url = reverse("creation_share", args=[run.creation_id])
    response = client.get(url)
    assert response.status_code == 403
    assert "Only owners, admins and members of this workspace can make share links." in response.content.decode()
    assert client.post(url, {"version": "shown"}).status_code == 403
    assert not ShareLink.objects.exists()


def test_an_outsider_or_a_colleague_of_a_private_creation_finds_nothing(team: Team, client: Client) -> None:
    private = finished_run(workspace=team.workspace, author=team.member, visibility=Visibility.PRIVATE, outputs=[])
    for person in (team.outsider, team.owner):
        client.force_login(person)
        assert client.get(reverse("creation_share", args=[private.creation_id])).status_code == 404


def test_admins_see_and_revoke_every_link_members_their_own(team: Team, run: Run, client: Client) -> None:
    colleague = team.viewer
    other = make_user("carla")
    membership_add(workspace=team.workspace, user=other, role=Role.MEMBER)
    mine = share(run.creation, team.member, label="mine").link
    theirs = share(run.creation, other, label="theirs").link
    listing = reverse("workspace_share_links", args=[team.workspace.slug])

    client.force_login(team.member)
    html = client.get(listing).content.decode()
    assert "mine" in html
    assert "theirs" not in html
    # Another member's link: not theirs to revoke.
    assert client.post(reverse("share_link_revoke", args=[theirs.pk])).status_code == 403
    response = client.post(reverse("share_link_revoke", args=[mine.pk]))
    assert response.status_code == 302
    assert response["Location"] == listing
    mine.refresh_from_db()
    assert (mine.revoked_at is not None, mine.revoked_by) == (True, team.member)

    client.force_login(team.owner)
    html = client.get(listing).content.decode()
    assert "mine" in html
    assert "theirs" in html
    assert 'data-state="revoked"' in html
    back = reverse("creation_share", args=[run.creation_id])
    response = client.post(reverse("share_link_revoke", args=[theirs.pk]), {"next": back})
    assert response["Location"] == back
    theirs.refresh_from_db()
    assert theirs.revoked_by == team.owner

    client.force_login(colleague)
    assert "No share links made by you yet." in client.get(listing).content.decode()


def test_revoke_goes_back_only_to_this_site(team: Team, run: Run, client: Client) -> None:
    link = share(run.creation, team.member).link
    client.force_login(team.member)
    response = client.post(reverse("share_link_revoke", args=[link.pk]), {"next": "https://evil.example/"})
    assert response["Location"] == reverse("workspace_share_links", args=[team.workspace.slug])


def test_the_creation_page_offers_share_to_those_who_may(team: Team, run: Run, client: Client) -> None:
    share_url = reverse("creation_share", args=[run.creation_id])
    client.force_login(team.member)
    assert share_url in client.get(run.creation.get_absolute_url()).content.decode()
    client.force_login(team.viewer)
    assert share_url not in client.get(run.creation.get_absolute_url()).content.decode()

