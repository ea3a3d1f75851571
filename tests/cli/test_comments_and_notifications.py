"""`atelier comments` and `atelier notifications` against the platform's real API in this process:
a comment with a mention, the mentioned person's notification listed and marked read, an edit and
a delete, and switching e-mails off for a kind; errors as sentences."""

from __future__ import annotations

import re

import pytest

from api.schemas.notifications import FollowOut, UnreadCountOut
from atelier_cli.commands import notifications
from creations.comments.models import Comment
from creations.models import Run, RunStatus
from creations.notifications.models import Follow, NotificationSetting
from creations.runs.state import run_finish
from tests.cli.running import Atelier
from tests.support.api import token_for
from tests.support.artifacts import finished_run
from tests.support.factories import RunFactory
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


def test_follow_a_creation_hear_of_its_next_run_and_unfollow(
    atelier_on_platform: Atelier, team: Team, run: Run
) -> None:
    viewer = token_for(team.viewer)
    followed = atelier_on_platform("notifications", "follow", str(run.pk), token=viewer)
    assert followed.status == 0, followed.err
    assert followed.out.strip() == (
        f"You follow creation {run.creation_id}: you hear when its runs end and when it gets comments."
    )
    assert atelier_on_platform("notifications", "count", token=viewer).out.strip() == "0 unread notifications."

    next_run = RunFactory.create(status=RunStatus.RUNNING, creation=run.creation, started_by=team.member, version=2)
    assert run_finish(run_id=next_run.pk, status=RunStatus.SUCCEEDED, reason="The agent submitted its work.")
    assert atelier_on_platform("notifications", "count", "--json", token=viewer).document() == {"unread": 1}
    [told] = atelier_on_platform("notifications", "list", "--unread", "--json", token=viewer).document()
    assert told["title"] == "“Fair poster” v2 finished"

    unfollowed = atelier_on_platform("notifications", "unfollow", str(run.pk), "--json", token=viewer)
    assert unfollowed.document() == {"creation_id": run.creation_id, "following": False}
    assert not Follow.objects.exists()

    refused = atelier_on_platform("notifications", "follow", str(run.pk), token=token_for(team.outsider))
    assert refused.status != 0
    assert "No such creation." in refused.err  # a workspace creation: outsiders are told it does not exist


def test_the_client_checks_only_fields_the_api_sends() -> None:
    assert set(notifications.Following.model_fields) <= set(FollowOut.model_fields)
    assert set(notifications.Unread.model_fields) <= set(UnreadCountOut.model_fields)
