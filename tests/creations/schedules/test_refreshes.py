"""Schedules with injected time, without a worker (each refresh's run is ended as a worker would end
it): ticks make versions, an identical refresh is kept but neither shown nor announced, a used-up
budget pauses the schedule with its reason on the creation page, and what may be set."""

from __future__ import annotations

import re
from datetime import time, timedelta
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from django.urls import reverse

from creations.models import Creation, Run, RunStatus
from creations.runs.services import creation_submit
from creations.schedules.models import Schedule, ScheduledRefresh
from creations.schedules.services import schedule_clear, schedule_set
from creations.schedules.signals import schedule_paused, schedule_refreshed
from tests.creations.schedules.steps import INSTRUCTION, MONDAY, ended, tick
from tests.support.fixtures.accounts import PASSWORD, Team
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard() -> Any:
    """What the schedule signals said, as the notifications will hear it."""
    said: dict[str, list[Any]] = {"refreshed": [], "paused": []}

    def refreshed(sender: Any, *, run: Run, **kwargs: Any) -> None:
        said["refreshed"].append(run.version)

    def paused(sender: Any, *, reason: str, **kwargs: Any) -> None:
        said["paused"].append(reason)

    schedule_refreshed.connect(refreshed, dispatch_uid="test-refreshed")
    schedule_paused.connect(paused, dispatch_uid="test-paused")
    yield said
    schedule_refreshed.disconnect(dispatch_uid="test-refreshed")
    schedule_paused.disconnect(dispatch_uid="test-paused")


def test_three_ticks_make_three_versions_and_the_identical_one_is_not_announced(
    team: Team, creation: Creation, heard: Any, django_capture_on_commit_callbacks: Any
) -> None:
    schedule_set(
        creation=creation, user=team.member, cadence="daily", at=time(6, 0), instruction=INSTRUCTION, now=MONDAY
    )
    assert tick(MONDAY + timedelta(minutes=30), django_capture_on_commit_callbacks) == []  # not due before 06:00

    made = []
    outputs = [{"report.md": b"# Week 2\n"}, {"report.md": b"# Week 2\n"}, {"report.md": b"# Week 3\n"}]
    for day, files in enumerate(outputs, start=1):
        (run,) = tick(MONDAY + timedelta(days=day, hours=1), django_capture_on_commit_callbacks)
        assert (run.instruction, run.started_by) == (INSTRUCTION, team.member)
        with django_capture_on_commit_callbacks(execute=True):
            made.append(ended(run, files))
        creation.refresh_from_db()
        if day == 2:  # identical to v2: kept, but the creation goes on showing v2
            assert creation.shown_run == made[0]

    assert [(run.version, run.parent.version if run.parent else None) for run in made] == [(2, 1), (3, 2), (4, 3)]
    refreshes = ScheduledRefresh.objects.order_by("due_at")
    assert [(r.run.version, r.files_identical) for r in refreshes] == [(2, False), (3, True), (4, False)]
    assert heard["refreshed"] == [2, 4]
    assert creation.shown_run == made[2]
    schedule = Schedule.objects.get()
    assert schedule.next_run_at == MONDAY + timedelta(days=4, hours=1)
    assert schedule.last_run_at == MONDAY + timedelta(days=3, hours=1)


def _version_items(page: str) -> dict[int, tuple[str, str]]:
    """The creation page's versions list: each version's classes and what its entry says."""
    items = re.findall(r'<li class="(version[^"]*)" data-version="(\d+)">(.*?)</li>', page, re.S)
    return {int(number): (classes, " ".join(text.split())) for classes, number, text in items}


def test_a_refresh_that_changed_nothing_is_marked_unchanged_in_the_versions_list(
    team: Team, creation: Creation, django_capture_on_commit_callbacks: Any
) -> None:
    schedule_set(
        creation=creation, user=team.member, cadence="daily", at=time(6, 0), instruction=INSTRUCTION, now=MONDAY
    )
    for day, files in enumerate([{"report.md": b"# Week 1\n"}, {"report.md": b"# Week 2\n"}], start=1):
        (run,) = tick(MONDAY + timedelta(days=day, hours=1), django_capture_on_commit_callbacks)
        with django_capture_on_commit_callbacks(execute=True):
            ended(run, files)

    browser = Client()
    browser.login(username=team.viewer.username, password=PASSWORD)
    versions = _version_items(browser.get(reverse("creation_detail", args=[creation.pk])).content.decode())
    assert sorted(versions) == [1, 2, 3]
    classes, said = versions[2]
    assert "unchanged" in classes.split()
    assert 'data-role="unchanged"' in said
    assert "refreshed on bob's schedule · the same files as v1" in said
    for version in (1, 3):
        assert "unchanged" not in versions[version][0].split()
        assert 'data-role="unchanged"' not in versions[version][1]
    assert "Succeeded" in versions[3][1]
    assert "refreshed on bob's schedule · from v2" in versions[3][1]


def test_a_used_up_budget_pauses_the_schedule_with_its_reason_on_the_creation_page(
    team: Team, creation: Creation, heard: Any, django_capture_on_commit_callbacks: Any
) -> None:
    schedule_set(
        creation=creation,
        user=team.member,
        cadence="weekly",
        weekday=0,
        at=time(6, 0),
        instruction=INSTRUCTION,
        now=MONDAY,
    )
    Workspace.objects.filter(pk=team.workspace.pk).update(quota_month_tokens=0)

    assert tick(MONDAY + timedelta(hours=2), django_capture_on_commit_callbacks) == []
    schedule = Schedule.objects.get()
    assert schedule.is_paused
    assert "used its 0 model tokens" in schedule.paused_reason
    assert heard["paused"] == [schedule.paused_reason]
    assert Run.objects.filter(creation=creation).count() == 1
    assert tick(MONDAY + timedelta(days=7, hours=2), django_capture_on_commit_callbacks) == []  # stays paused

    browser = Client()
    browser.login(username=team.member.username, password=PASSWORD)
    page = browser.get(reverse("creation_detail", args=[creation.pk])).content.decode()
    assert "Scheduled refreshes are paused" in page
    assert "used its 0 model tokens" in page

    Workspace.objects.filter(pk=team.workspace.pk).update(quota_month_tokens=10**9)
    schedule_set(
        creation=creation,
        user=team.owner,
        cadence="weekly",
        weekday=0,
        at=time(6, 0),
        instruction=INSTRUCTION,
        now=MONDAY + timedelta(days=8),
    )
    assert (
        len(tick(MONDAY + timedelta(days=14, hours=2), django_capture_on_commit_callbacks)) == 1
    )  # set again: resumed


def test_a_refresh_stopped_by_the_budget_pauses_the_schedule(
    team: Team, creation: Creation, heard: Any, django_capture_on_commit_callbacks: Any
) -> None:
    schedule_set(
        creation=creation, user=team.member, cadence="daily", at=time(6, 0), instruction=INSTRUCTION, now=MONDAY
    )
    (run,) = tick(MONDAY + timedelta(hours=2), django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        ended(run, {}, status=RunStatus.QUOTA_EXCEEDED)
    schedule = Schedule.objects.get()
    assert (schedule.is_paused, schedule.paused_reason) == (True, "ended")
    assert heard == {"refreshed": [], "paused": ["ended"]}


@pytest.mark.parametrize(
    ("fields", "field", "said"),
    [
        ({"cadence": "cron", "cron": "61 * * * *"}, "cron", "not a cron line"),
        ({"cadence": "cron", "cron": "0 6 * * * *"}, "cron", "not a cron line"),
        ({"cadence": "cron", "cron": "*/5 * * * *"}, "cron", "more often than once every 60 minutes"),
        ({"cadence": "weekly"}, "weekday", "day of the week"),
        ({"cadence": "hourly"}, "cadence", "daily, weekly or a cron line"),
        ({"cadence": "daily", "instruction": " "}, "instruction", "what each refresh should do"),
    ],
)
def test_a_schedule_that_cannot_be_followed_is_refused_saying_why(
    team: Team, creation: Creation, fields: dict[str, Any], field: str, said: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        schedule_set(creation=creation, user=team.member, **{"instruction": INSTRUCTION, **fields})
    assert said in refused.value.message_dict[field][0]
    assert not Schedule.objects.exists()


def test_a_cron_line_is_followed(team: Team, creation: Creation) -> None:
    schedule = schedule_set(
        creation=creation, user=team.member, cadence="cron", cron="30 7 * * 1-5", instruction=INSTRUCTION, now=MONDAY
    )
    assert schedule.next_run_at == MONDAY.replace(hour=7, minute=30)
    assert schedule.describe() == "on the cron line “30 7 * * 1-5” (UTC)"


def test_only_those_who_may_start_runs_set_or_clear_a_schedule(team: Team, creation: Creation) -> None:
    for who in (team.viewer, team.outsider):
        with pytest.raises(PermissionDenied):
            schedule_set(creation=creation, user=who, cadence="daily", instruction=INSTRUCTION)
    schedule_set(creation=creation, user=team.member, cadence="daily", instruction=INSTRUCTION)
    with pytest.raises(PermissionDenied):
        schedule_clear(creation=creation, user=team.viewer)
    assert schedule_clear(creation=creation, user=team.owner)
    assert not Schedule.objects.exists()


def test_the_demo_model_cannot_refresh_on_a_schedule(team: Team) -> None:
    run = creation_submit(workspace=team.workspace, author=team.member, brief="a poster")
    with pytest.raises(ValidationError, match="demo model"):
        schedule_set(creation=run.creation, user=team.member, cadence="daily", instruction=INSTRUCTION)


def test_setting_a_schedule_again_starts_from_its_time_and_day(team: Team, creation: Creation) -> None:
    schedule_set(
        creation=creation, user=team.owner, cadence="weekly", weekday=1, at=time(7, 30), instruction=INSTRUCTION
    )
    browser = Client()
    browser.login(username=team.owner.username, password=PASSWORD)
    page = browser.get(reverse("creation_schedule", args=[creation.pk])).content.decode()
    assert 'name="at" value="07:30"' in page
    assert '<option value="1" selected>Tuesday</option>' in page
