"""Comments under a creation, through its pages: written with @mentions (shown escaped, the
mention marked), on a version or the whole creation; edited by their author only, deleted by
their author or an owner or admin; viewers comment only when the workspace allows it; a long
comment is refused with its text kept; outsiders of a public creation see no conversation."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from creations.comments.models import COMMENT_MAX_CHARS, Comment
from creations.comments.services import comment_create
from creations.models import Run, Visibility
from creations.notifications.models import Kind, Notification
from tests.support.artifacts import finished_run
from tests.support.fixtures.accounts import Team
from workspaces.services import workspace_allow_viewers_to_comment

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(team: Team) -> Run:
    made = finished_run(workspace=team.workspace, author=team.member, outputs=[], visibility=Visibility.PUBLIC)
    made.creation.title = "Poster"
    made.creation.save(update_fields=["title"])
    return made


def post_comment(client: Client, run: Run, text: str, *, on_version: bool = False) -> Any:
    data = {"text": text, "run": str(run.pk)} | ({"on_version": "on"} if on_version else {})
    return client.post(reverse("creation_comment", args=[run.creation_id]), data)


def test_a_comment_with_a_mention_is_shown_escaped_and_tells_the_one_mentioned(
    team: Team, run: Run, client: Client
) -> None:
    client.force_login(team.owner)
    answer = post_comment(client, run, "<b>bold?</b> @bob the logo is too small", on_version=True)
    comment = Comment.objects.get()
    assert answer.status_code == 302
    assert answer["Location"] == f"/creations/{run.creation_id}/?run={run.pk}#comment-{comment.pk}"
    assert comment.run_id == run.pk
    page = client.get(reverse("creation_detail", args=[run.creation_id])).content.decode()
    assert '&lt;b&gt;bold?&lt;/b&gt; <span class="mention">@bob</span> the logo is too small' in page
    assert "on v1" in page
    assert Notification.objects.get(recipient=team.member).kind == Kind.MENTION


def test_viewers_comment_only_when_the_workspace_allows_it(team: Team, run: Run, client: Client) -> None:
    client.force_login(team.viewer)
    refused = post_comment(client, run, "Nice")
    assert refused.status_code == 403
    assert "viewers too, if its settings allow" in refused.content.decode()
    assert not Comment.objects.exists()
    workspace_allow_viewers_to_comment(workspace=team.workspace, actor=team.owner, allowed=True)
    assert post_comment(client, run, "Nice").status_code == 302
    assert Comment.objects.get().author == team.viewer


def test_the_workspace_settings_page_switches_viewers_comments(team: Team, client: Client) -> None:
    client.force_login(team.owner)
    url = reverse("workspace_settings", args=[team.workspace.slug])
    assert client.post(url, {"name": "Studio", "viewers_may_comment": "on"}).status_code == 302
    team.workspace.refresh_from_db()
    assert team.workspace.viewers_may_comment


def test_a_comment_over_its_limit_is_refused_and_kept_whole(team: Team, run: Run, client: Client) -> None:
    client.force_login(team.member)
    text = "x" * (COMMENT_MAX_CHARS + 5)
    answer = post_comment(client, run, text)
    assert answer.status_code == 400
    page = answer.content.decode()
    assert f"over its limit of {COMMENT_MAX_CHARS:,}" in page
    assert text in page  # kept as typed, never cut
    assert f'data-max-chars="{COMMENT_MAX_CHARS}"' in page
    assert not Comment.objects.exists()


def test_only_the_author_edits_and_a_new_mention_is_told(team: Team, run: Run, client: Client) -> None:
    comment = comment_create(creation=run.creation, user=team.owner, text="Too small")
    edit = reverse("comment_edit", args=[comment.pk])
    client.force_login(team.member)
    assert client.get(edit).status_code == 403
    assert client.post(edit, {"text": "mine now"}).status_code == 403
    client.force_login(team.owner)
    assert client.get(edit).status_code == 200
    assert client.post(edit, {"text": "Too small, @bob"}).status_code == 302
    comment.refresh_from_db()
    assert (comment.text, comment.edited_at is not None) == ("Too small, @bob", True)
    assert Notification.objects.filter(recipient=team.member, kind=Kind.MENTION).count() == 1
    assert client.post(edit, {"text": "Too small, @bob!"}).status_code == 302  # mentioned already: not again
    assert Notification.objects.filter(recipient=team.member, kind=Kind.MENTION).count() == 1


def test_the_author_or_an_admin_deletes_others_may_not(team: Team, run: Run, client: Client) -> None:
    comment = comment_create(creation=run.creation, user=team.member, text="Draft")
    delete = reverse("comment_delete", args=[comment.pk])
    client.force_login(team.viewer)
    client.post(delete)
    assert Comment.objects.filter(pk=comment.pk).exists()
    client.force_login(team.owner)  # an owner: may delete anyone's
    assert client.post(delete).status_code == 302
    assert not Comment.objects.filter(pk=comment.pk).exists()


def test_outsiders_of_a_public_creation_see_its_files_not_its_conversation(
    team: Team, run: Run, client: Client
) -> None:
    comment_create(creation=run.creation, user=team.member, text="Internal note")
    client.force_login(team.outsider)
    page = client.get(reverse("creation_detail", args=[run.creation_id]))
    assert page.status_code == 200
    assert b"Internal note" not in page.content
    assert client.post(reverse("creation_comment", args=[run.creation_id]), {"text": "hi"}).status_code == 403
    assert client.get(reverse("comment_edit", args=[Comment.objects.get().pk])).status_code == 404


def test_follow_from_the_creation_page(team: Team, run: Run, client: Client) -> None:
    client.force_login(team.viewer)
    url = reverse("creation_follow", args=[run.creation_id])
    assert client.post(url, {"following": "1"}).status_code == 302
    assert "Following" in client.get(reverse("creation_detail", args=[run.creation_id])).content.decode()
    comment_create(creation=run.creation, user=team.owner, text="Bigger logo")
    assert Notification.objects.get(recipient=team.viewer).kind == Kind.COMMENT
