"""Who hears of a schedule: the person who set it (and the creation's followers) of each refresh that
made a new version, never of an identical one, and never as a run that finished; the person who set
it of a pause, with its reason; each as they chose in their notification settings."""

from __future__ import annotations

from datetime import time, timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Creation, RunStatus
from creations.notifications.models import EmailStatus, Kind, Notification
from creations.notifications.selectors import Choice
from creations.notifications.services import follow_set, notification_settings_save
from creations.schedules.models import Schedule
from creations.schedules.services import schedule_set
from tests.creations.schedules.steps import INSTRUCTION, MONDAY, ended, tick
from tests.support.api import ApiClient, token_for
from tests.support.fixtures.accounts import PASSWORD, Team
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def told(user: Any) -> list[tuple[str, int | None]]:
    """What `user` was told, oldest first: each notification's kind and the version it is about."""
    return [
        (n.kind, n.run.version if n.run else None)
        for n in Notification.objects.filter(recipient=user).select_related("run").order_by("pk")
    ]


def refresh_three_times(creation: Creation, capture: Any) -> None:
    """Three daily refreshes, the second with the files of the first: v2, v3 (identical), v4."""
    outputs = [{"report.md": b"# Week 2\n"}, {"report.md": b"# Week 2\n"}, {"report.md": b"# Week 3\n"}]
    for day, files in enumerate(outputs, start=1):
        (run,) = tick(MONDAY + timedelta(days=day, hours=1), capture)
        with capture(execute=True):
            ended(run, files)


def test_the_setter_and_the_followers_hear_of_each_new_version_and_never_of_an_identical_refresh(
    team: Team, creation: Creation, django_capture_on_commit_callbacks: Any
) -> None:
    follow_set(creation=creation, user=team.owner, following=True)
    schedule_set(
        creation=creation, user=team.member, cadence="daily", at=time(6, 0), instruction=INSTRUCTION, now=MONDAY
    )
    refresh_three_times(creation, django_capture_on_commit_callbacks)

    # v1 was the member's own run; the refreshes are told as new versions only, v3 not at all.
    assert told(team.member) == [(Kind.RUN_SUCCEEDED, 1), (Kind.SCHEDULE_REFRESHED, 2), (Kind.SCHEDULE_REFRESHED, 4)]
    assert told(team.owner) == [(Kind.SCHEDULE_REFRESHED, 2), (Kind.SCHEDULE_REFRESHED, 4)]
    newest = Notification.objects.filter(recipient=team.member, kind=Kind.SCHEDULE_REFRESHED).first()
    assert newest is not None
    assert newest.title == "“a weekly report” has a new version: v4"
    assert newest.body == f"Refreshed daily at 06:00 UTC: {INSTRUCTION}"
    assert newest.path == f"/creations/{creation.pk}/?run={newest.run_id}"
    assert newest.email_status == EmailStatus.PENDING

    # The bell's page and the API list them like any other notification.
    browser = Client()
    browser.login(username=team.member.username, password=PASSWORD)
    assert "has a new version: v4" in browser.get(reverse("notifications")).content.decode()
    answer = ApiClient(token_for(team.member)).get("/api/v1/notifications")
    assert answer.status_code == 200, answer.content
    assert [item["kind"] for item in answer.json()["results"]][:2] == [Kind.SCHEDULE_REFRESHED] * 2


def test_a_failed_refresh_is_told_as_a_failed_run(
    team: Team, creation: Creation, django_capture_on_commit_callbacks: Any
) -> None:
    schedule_set(
        creation=creation, user=team.member, cadence="daily", at=time(6, 0), instruction=INSTRUCTION, now=MONDAY
    )
    (run,) = tick(MONDAY + timedelta(hours=2), django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        ended(run, {}, status=RunStatus.FAILED)
    assert told(team.member) == [(Kind.RUN_SUCCEEDED, 1), (Kind.RUN_FAILED, 2)]


def test_a_pause_tells_the_setter_once_with_its_reason(
    team: Team, creation: Creation, django_capture_on_commit_callbacks: Any
) -> None:
    follow_set(creation=creation, user=team.owner, following=True)
    schedule_set(
        creation=creation, user=team.member, cadence="daily", at=time(6, 0), instruction=INSTRUCTION, now=MONDAY
    )
    Workspace.objects.filter(pk=team.workspace.pk).update(quota_month_tokens=0)
    assert tick(MONDAY + timedelta(hours=2), django_capture_on_commit_callbacks) == []
    assert tick(MONDAY + timedelta(days=1, hours=2), django_capture_on_commit_callbacks) == []  # stays paused

    [paused] = Notification.objects.filter(kind=Kind.SCHEDULE_PAUSED)
    reason = Schedule.objects.get().paused_reason
    assert "used its 0 model tokens" in reason
    assert (paused.recipient, paused.body) == (team.member, reason)
    assert paused.title == "Scheduled refreshes of “a weekly report” paused"
    assert paused.path == f"/creations/{creation.pk}/"

    # Set again, it may pause again: that is news again.
    schedule_set(
        creation=creation,
        user=team.member,
        cadence="daily",
        at=time(6, 0),
        instruction=INSTRUCTION,
        now=MONDAY + timedelta(days=2),
    )
    assert tick(MONDAY + timedelta(days=3, hours=2), django_capture_on_commit_callbacks) == []
    assert Notification.objects.filter(recipient=team.member, kind=Kind.SCHEDULE_PAUSED).count() == 2
    assert not Notification.objects.filter(recipient=team.owner).exists()  # a follower is not the setter


def test_each_kind_is_told_as_the_setter_chose(
    team: Team, creation: Creation, django_capture_on_commit_callbacks: Any
) -> None:
    notification_settings_save(
        user=team.member,
        choices=[
            Choice(Kind.SCHEDULE_REFRESHED, in_page=False, email=False),
            Choice(Kind.SCHEDULE_PAUSED, in_page=False, email=True),
        ],
    )
    schedule_set(
        creation=creation, user=team.member, cadence="daily", at=time(6, 0), instruction=INSTRUCTION, now=MONDAY
    )
    refresh_three_times(creation, django_capture_on_commit_callbacks)
    assert told(team.member) == [(Kind.RUN_SUCCEEDED, 1)]

    Workspace.objects.filter(pk=team.workspace.pk).update(quota_month_tokens=0)
    assert tick(MONDAY + timedelta(days=4, hours=2), django_capture_on_commit_callbacks) == []
    paused = Notification.objects.get(recipient=team.member, kind=Kind.SCHEDULE_PAUSED)
    assert (paused.in_page, paused.email_status) == (False, EmailStatus.PENDING)


def test_the_settings_page_and_the_api_have_both_switches_for_the_schedule_kinds(team: Team) -> None:
    browser = Client()
    browser.login(username=team.member.username, password=PASSWORD)
    page = browser.get(reverse("notification_settings")).content.decode()
    for kind in (Kind.SCHEDULE_REFRESHED, Kind.SCHEDULE_PAUSED):
        assert f'name="{kind}_in_page"' in page
        assert f'name="{kind}_email"' in page

    api = ApiClient(token_for(team.member))
    answer = api.send(
        "PUT", "/api/v1/notifications/settings", [{"kind": Kind.SCHEDULE_PAUSED, "in_page": False, "email": True}]
    )
    assert answer.status_code == 200, answer.content
    answer = api.get("/api/v1/notifications/settings")
    assert answer.status_code == 200, answer.content
    assert [item["kind"] for item in answer.json()] == Kind.values
    assert {item["kind"]: (item["in_page"], item["email"]) for item in answer.json()}[Kind.SCHEDULE_PAUSED] == (
        False,
        True,
    )
