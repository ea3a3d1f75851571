"""Who hears of what: a run's end and wait, comments and mentions, invitations; once per event
and person, as each person chose, and only about what they still see."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from creations.comments.services import comment_create
from creations.models import Run, RunStatus, Visibility
from creations.notifications.models import EmailStatus, Kind, Notification
from creations.notifications.selectors import Choice, notifications_shown, unread_count
from creations.notifications.services import (
    follow_set,
    notification_settings_save,
    notifications_mark_all_read,
    notifications_prune_read,
)
from creations.runs.state import run_finish, run_mark_waiting
from tests.support.factories import RunFactory
from tests.support.fixtures.accounts import Team
from workspaces.invitations import invitation_create
from workspaces.models import Membership, Role
from workspaces.services import membership_remove

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(team: Team) -> Run:
    return RunFactory.create(
        status=RunStatus.RUNNING,
        creation__workspace=team.workspace,
        creation__author=team.member,
        creation__title="Poster",
    )


def kinds_of(user: Any) -> list[str]:
    return [n.kind for n in Notification.objects.filter(recipient=user)]


def test_a_finished_run_tells_who_started_it_once_and_asks_for_one_email(team: Team, run: Run) -> None:
    assert run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="The agent submitted its work.")
    assert not run_finish(run_id=run.pk, status=RunStatus.FAILED, reason="again")  # ended already: nothing more
    [notification] = Notification.objects.filter(recipient=team.member)
    assert notification.kind == Kind.RUN_SUCCEEDED
    assert notification.title == "“Poster” v1 finished"
    assert notification.path == f"/creations/{run.creation_id}/?run={run.pk}"
    assert notification.email_status == EmailStatus.PENDING
    assert unread_count(team.member) == 1
    assert Notification.objects.count() == 1  # nobody else started or follows it


def test_a_failed_run_and_a_waiting_run_tell_followers_too(team: Team, run: Run) -> None:
    follow_set(creation=run.creation, user=team.owner, following=True)
    queued = RunFactory.create(creation=run.creation, started_by=team.member)
    run_mark_waiting(run_id=queued.pk, reason="Waiting: 1 of 1")
    assert run_finish(run_id=run.pk, status=RunStatus.TIMED_OUT, reason="It took too long.")
    assert sorted(kinds_of(team.owner)) == [Kind.RUN_FAILED, Kind.RUN_WAITING]
    assert sorted(kinds_of(team.member)) == [Kind.RUN_FAILED, Kind.RUN_WAITING]
    failed = Notification.objects.get(recipient=team.owner, kind=Kind.RUN_FAILED)
    assert failed.title == "“Poster” v1 ended: timed out"
    assert failed.body == "It took too long."


def test_a_waiting_run_tells_once_however_often_its_reason_changes(team: Team, run: Run) -> None:
    queued = RunFactory.create(creation=run.creation, started_by=team.member)
    run_mark_waiting(run_id=queued.pk, reason="Waiting: 1 of 1 run in use.")
    run_mark_waiting(run_id=queued.pk, reason="Waiting: its earlier runs start first.")
    assert kinds_of(team.member) == [Kind.RUN_WAITING]


def test_switched_off_kinds_are_not_told_and_not_mailed(team: Team, run: Run) -> None:
    notification_settings_save(user=team.member, choices=[Choice(Kind.RUN_SUCCEEDED, in_page=False, email=False)])
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="done")
    assert not Notification.objects.filter(recipient=team.member).exists()


def test_off_in_the_page_but_on_by_email_is_mailed_and_not_shown(team: Team, run: Run) -> None:
    notification_settings_save(user=team.member, choices=[Choice(Kind.RUN_SUCCEEDED, in_page=True, email=False)])
    notification_settings_save(user=team.member, choices=[Choice(Kind.RUN_SUCCEEDED, in_page=False, email=True)])
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="done")
    notification = Notification.objects.get(recipient=team.member)
    assert notification.email_status == EmailStatus.PENDING
    assert unread_count(team.member) == 0


def test_a_follower_who_no_longer_sees_the_creation_is_not_told(team: Team, run: Run) -> None:
    follow_set(creation=run.creation, user=team.owner, following=True)
    run.creation.visibility = Visibility.PRIVATE
    run.creation.save(update_fields=["visibility"])
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="done")
    assert kinds_of(team.owner) == []
    assert kinds_of(team.member) == [Kind.RUN_SUCCEEDED]  # the author sees their private creation


def test_whoever_cancelled_a_run_is_not_told_of_it(team: Team, run: Run) -> None:
    Run.objects.filter(pk=run.pk).update(cancelled_by=team.member)
    run_finish(run_id=run.pk, status=RunStatus.CANCELLED, reason="Cancelled by bob.")
    assert kinds_of(team.member) == []


def test_a_comment_tells_the_author_and_a_mention_tells_the_one_mentioned(team: Team, run: Run) -> None:
    follow_set(creation=run.creation, user=team.viewer, following=True)
    comment_create(creation=run.creation, user=team.owner, text="@mallory and @BOB: the logo is too small.")
    assert kinds_of(team.member) == [Kind.MENTION]  # the author, mentioned: told once, of the mention
    assert kinds_of(team.viewer) == [Kind.COMMENT]  # a follower, not mentioned by name
    assert kinds_of(team.outsider) == []  # not a member: a mention of nobody here
    assert kinds_of(team.owner) == []  # nobody hears of what they said themselves
    mention = Notification.objects.get(recipient=team.member)
    assert mention.title == "alice mentioned you on “Poster”"
    assert mention.path.endswith(f"#comment-{mention.comment_id}")


def test_an_invitation_to_someone_with_an_account_is_told_in_their_page(team: Team, settings: Any) -> None:
    invitation_create(workspace=team.workspace, actor=team.owner, role=Role.MEMBER, email=team.outsider.email.upper())
    [notification] = notifications_shown(team.outsider)
    assert notification.kind == Kind.INVITATION
    assert notification.title == "alice invites you to Studio as member"
    assert notification.email_status == EmailStatus.NOT_WANTED  # the invitation mails itself


def test_what_is_said_in_a_workspace_one_left_is_no_longer_shown(team: Team, run: Run) -> None:
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="done")
    assert unread_count(team.member) == 1
    membership_remove(membership=Membership.objects.get(workspace=team.workspace, user=team.member), actor=team.owner)
    assert unread_count(team.member) == 0


def test_mark_all_read_empties_the_bell(team: Team, run: Run) -> None:
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="done")
    assert notifications_mark_all_read(user=team.member) == 1
    assert unread_count(team.member) == 0


def test_a_failing_listener_leaves_the_run_finished(team: Team, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        Notification.objects.create(recipient=team.member, kind="no such kind", event_key="x", title="x")  # refused

    monkeypatch.setattr("creations.notifications.receivers.notify", broken)
    assert run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="done")
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert not Notification.objects.exists()


def test_read_notifications_older_than_the_retention_are_pruned(team: Team, run: Run, settings: Any) -> None:
    settings.NOTIFICATION_RETENTION_DAYS = 90
    now = timezone.now()

    def told(key: str, *, days_old: int, read: bool, email: str = EmailStatus.SENT) -> Notification:
        made = Notification.objects.create(
            recipient=team.member, kind=Kind.RUN_SUCCEEDED, event_key=key, title=key, email_status=email
        )
        Notification.objects.filter(pk=made.pk).update(
            created_at=now - timedelta(days=days_old), read_at=now if read else None
        )
        return made

    told("old and read", days_old=91, read=True)
    told("old and read, no e-mail", days_old=200, read=True, email=EmailStatus.NOT_WANTED)
    kept = [
        told("old, unread", days_old=91, read=False),
        told("recent and read", days_old=89, read=True),
        told("old and read, its e-mail still owed", days_old=91, read=True, email=EmailStatus.PENDING),
    ]
    assert notifications_prune_read() == 2
    assert set(Notification.objects.values_list("pk", flat=True)) == {n.pk for n in kept}
    assert unread_count(team.member) == 1
