"""`atelier comments` and `atelier notifications` against the platform's real API in this process:
a comment with a mention, the mentioned person's notification listed and marked read, an edit and
a delete, and switching e-mails off for a kind; errors as sentences."""

from __future__ import annotations

import re

import pytest

from creations.comments.models import Comment
from creations.models import Run
from creations.notifications.models import NotificationSetting
from tests.cli.running import Atelier
from tests.support.api import token_for
from tests.support.artifacts import finished_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(team: Team) -> Run:
    made = finished_run(workspace=team.workspace, author=team.member, brief="A poster", outputs=[])
    made.creation.title = "Fair poster"
    made.creation.save(update_fields=["title"])
    return made


def test_comment_mention_notify_read_edit_delete(atelier_on_platform: Atelier, team: Team, run: Run) -> None:
    owner, member = token_for(team.owner), token_for(team.member)
    posted = atelier_on_platform(
        "comments", "add", str(run.pk), "Bigger logo, @bob", "--on-version", "--json", token=owner
    )
    assert posted.status == 0, posted.err
    comment = posted.document()
    assert (comment["version"], comment["mentions"], comment["author"]) == (1, ["bob"], "alice")

    listed = atelier_on_platform("comments", "list", str(run.pk), token=member)
    assert listed.status == 0, listed.err
    assert f"#{comment['id']} alice on v1" in listed.out
    assert "Bigger logo, @bob" in listed.out

    unread = atelier_on_platform("notifications", "list", "--unread", "--json", token=member).document()
    assert [item["kind"] for item in unread] == ["mention"]
    assert unread[0]["title"] == "alice mentioned you on v1 of “Fair poster”"
    read = atelier_on_platform("notifications", "read", str(unread[0]["id"]), token=member)
    assert read.out.strip() == "1 notification marked read."
    still_unread = atelier_on_platform("notifications", "list", "--unread", token=member)
    assert still_unread.out.strip() == "No unread notifications."

    refused = atelier_on_platform("comments", "edit", str(comment["id"]), "mine now", token=member)
    assert refused.status != 0
    assert "You can edit only the comments you wrote." in refused.err
    edited = atelier_on_platform("comments", "edit", str(comment["id"]), "Bigger logo please", token=owner)
    assert edited.status == 0, edited.err
    assert Comment.objects.get().text == "Bigger logo please"
    deleted = atelier_on_platform("comments", "delete", str(comment["id"]), token=owner)
    assert (deleted.status, deleted.out.strip()) == (0, f"Comment {comment['id']} deleted.")
    assert not Comment.objects.exists()


def test_switch_a_kind_of_email_off(atelier_on_platform: Atelier, team: Team) -> None:
    member = token_for(team.member)
    changed = atelier_on_platform("notifications", "settings", "--email", "run_succeeded=off", token=member)
    assert changed.status == 0, changed.err
    assert re.search(r"^run_succeeded +on +off$", changed.out, re.MULTILINE), changed.out
    assert NotificationSetting.objects.get(user=team.member, kind="run_succeeded").email is False
    unknown = atelier_on_platform("notifications", "settings", "--email", "weather=off", token=member)
    assert unknown.status != 0
    assert "'weather' is not a kind of notification" in unknown.err
