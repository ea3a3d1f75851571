"""Making and revoking share links, as every page and API call does through the services."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from creations.models import Run
from creations.sharing.models import ShareLink
from creations.sharing.services import share_link_create, share_link_revoke
from creations.sharing.tokens import token_hash
from tests.support.artifacts import finished_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(team: Team) -> Run:
    return finished_run(workspace=team.workspace, author=team.member, outputs=[])


def test_only_a_hash_of_the_link_is_kept(team: Team, run: Run) -> None:
    made = share_link_create(creation=run.creation, user=team.member)
    assert made.token is not None
    assert made.url == f"http://127.0.0.1:8000/s/{made.token}/"
    stored = ShareLink.objects.values().get()
    assert stored["token_hash"] == token_hash(made.token)
    assert made.token not in str(stored)
    assert stored["token_hint"] == made.token[-4:]


def test_the_same_idempotency_key_answers_the_same_link(team: Team, run: Run) -> None:
    first = share_link_create(creation=run.creation, user=team.member, label="press", idempotency_key="k-1")
    again = share_link_create(creation=run.creation, user=team.member, label="press", idempotency_key="k-1")
    assert (again.replayed, again.link.pk, again.url) == (True, first.link.pk, first.url)
    assert ShareLink.objects.count() == 1
    other_person = share_link_create(creation=run.creation, user=team.owner, label="press", idempotency_key="k-1")
    assert not other_person.replayed
    assert other_person.url != first.url
    with pytest.raises(ValidationError, match="used for a different request"):
        share_link_create(creation=run.creation, user=team.member, label="printer", idempotency_key="k-1")
    assert ShareLink.objects.count() == 2


def test_what_is_asked_is_checked(team: Team, run: Run) -> None:
    elsewhere = finished_run(workspace=team.workspace, author=team.member, outputs=[])
    with pytest.raises(ValidationError) as refused:
        share_link_create(
            creation=run.creation, user=team.member, run=elsewhere, expires_in_days=400, label="x" * 101
        )
    assert set(refused.value.message_dict) == {"run", "expires_in_days", "label"}
    assert not ShareLink.objects.exists()


def test_viewers_and_outsiders_share_nothing(team: Team, run: Run) -> None:
    for person in (team.viewer, team.outsider):
        with pytest.raises(PermissionDenied):
            share_link_create(creation=run.creation, user=person)
    assert not ShareLink.objects.exists()


def test_members_revoke_their_own_links_admins_any(team: Team, run: Run) -> None:
    link = share_link_create(creation=run.creation, user=team.owner).link
    with pytest.raises(PermissionDenied):
        share_link_revoke(link=link, user=team.member)
    mine = share_link_create(creation=run.creation, user=team.member).link
    assert share_link_revoke(link=mine, user=team.member).revoked_at is not None
    first = share_link_revoke(link=link, user=team.owner).revoked_at
    assert first is not None
    assert share_link_revoke(link=link, user=team.owner).revoked_at == first  # again: nothing changes
