"""A read built once by the ORM and run again with other values (creations/usage/reused_statement.py):
the same rows as the queryset built afresh, one build per shape, and a build afresh whenever the
values cannot all be put in their places."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models import DurationField, ExpressionWrapper, F, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.test.utils import CaptureQueriesContext

from creations.models import RunStatus
from creations.usage import reused_statement
from creations.usage.reused_statement import ReusedStatement
from creations.usage.selectors import workspaces_month_usage
from tests.support.factories import RunFactory, WorkspaceFactory, make_run
from tests.support.fixtures.accounts import Team
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

JANUARY = datetime(2031, 1, 10, tzinfo=UTC)


class CountedBuilds:
    """Workspaces among `ids` made since `since`, with their age at `now` (a duration, which the
    ORM converts on databases without one of their own)."""

    def __init__(self) -> None:
        self.builds = 0

    def __call__(self, *, ids: list[int], since: datetime, now: datetime) -> QuerySet[Any, Any]:
        self.builds += 1
        age = ExpressionWrapper(Value(now) - F("created_at"), output_field=DurationField())
        return Workspace.objects.filter(pk__in=ids, created_at__gte=since).annotate(age=age).values("pk", "slug", "age")


@pytest.fixture
def workspaces() -> list[Workspace]:
    made = WorkspaceFactory.create_batch(4)
    for days_ago, workspace in enumerate(made):
        Workspace.objects.filter(pk=workspace.pk).update(created_at=JANUARY - timedelta(days=days_ago))
    return list(Workspace.objects.filter(pk__in=[w.pk for w in made]).order_by("-created_at"))


def test_each_call_gets_the_rows_its_own_values_select_from_one_build_per_shape(workspaces: list[Workspace]) -> None:
    build = CountedBuilds()
    statement = ReusedStatement(build)
    ids = [w.pk for w in workspaces]
    asked = [
        (ids[:2], JANUARY - timedelta(days=5), JANUARY),
        (ids[2:], JANUARY - timedelta(days=2), JANUARY + timedelta(hours=1)),  # only the third is new enough
        (ids[1:3], JANUARY, JANUARY + timedelta(days=1)),  # only the first would be: it is not asked for
        ([ids[0], ids[3]], JANUARY - timedelta(days=30), JANUARY + timedelta(minutes=5)),
    ]
    for chosen, since, now in asked:
        with CaptureQueriesContext(connection) as queries:
            got = statement.rows(shape="workspaces", ids=chosen, since=since, now=now)
        expected = list(CountedBuilds()(ids=chosen, since=since, now=now))
        assert sorted(got, key=lambda row: row["pk"]) == sorted(expected, key=lambda row: row["pk"])
        assert all(isinstance(row["age"], timedelta) for row in got)
        assert len(queries) == 1
    assert build.builds == 1  # every call read two workspaces: one shape

    statement.rows(shape="workspaces", ids=ids[:3], since=JANUARY, now=JANUARY)
    statement.rows(shape="workspaces", ids=ids[1:], since=JANUARY, now=JANUARY)
    assert build.builds == 2  # three workspaces: a statement of another shape, built once


def test_past_the_statements_a_thread_keeps_the_oldest_is_built_again_and_every_answer_stays_right(
    workspaces: list[Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reused_statement, "KEPT_PER_THREAD", 2)
    build = CountedBuilds()
    statement = ReusedStatement(build)
    ids = [w.pk for w in workspaces]
    since = JANUARY - timedelta(days=30)
    for count in (1, 2, 3, 1):  # the fourth call's shape was the first kept, and is gone by then
        got = statement.rows(shape="workspaces", ids=ids[:count], since=since, now=JANUARY)
        assert sorted(row["pk"] for row in got) == sorted(ids[:count])
    assert build.builds == 4

    statement.rows(shape="workspaces", ids=ids[:3], since=since, now=JANUARY)
    assert build.builds == 4  # still kept


def test_a_value_the_statement_does_not_take_as_a_parameter_is_built_afresh_each_call(
    workspaces: list[Workspace],
) -> None:
    builds = 0

    def inlined(*, ids: list[int], since: datetime) -> QuerySet[Any, Any]:
        nonlocal builds
        builds += 1
        # The time written into the statement's text, where no stand-in can be found and replaced.
        newer = RawSQL(f"created_at >= '{since.isoformat()}'::timestamptz", [])  # noqa: S611 - a test's own value
        return Workspace.objects.filter(pk__in=ids).alias(newer=newer).filter(newer=True).values("pk")

    statement = ReusedStatement(inlined)
    ids = [w.pk for w in workspaces]
    first = statement.rows(shape="inlined", ids=ids, since=JANUARY - timedelta(days=1))
    second = statement.rows(shape="inlined", ids=ids, since=JANUARY)

    assert sorted(row["pk"] for row in first) == sorted(w.pk for w in workspaces[:2])
    assert [row["pk"] for row in second] == [workspaces[0].pk]
    assert builds == 3  # one with stand-ins, found wanting; then each call's own


def test_values_of_other_kinds_are_refused_plainly(workspaces: list[Workspace]) -> None:
    statement = ReusedStatement(lambda **_: Workspace.objects.values("pk"))
    with pytest.raises(TypeError, match="datetimes, ints and lists of ints, not str"):
        statement.rows(shape="slugs", slug="studio")


def test_a_month_of_several_workspaces_is_each_one_s_own_however_many_are_asked_for(team: Team) -> None:
    others = WorkspaceFactory.create_batch(2)
    make_run(team, status=RunStatus.RUNNING, prompt_tokens=300, completion_tokens=100)
    RunFactory.create(creation__workspace=others[1], status=RunStatus.RUNNING, prompt_tokens=7, completion_tokens=0)

    one = workspaces_month_usage(workspaces=[team.workspace])
    three = workspaces_month_usage(workspaces=[others[1], team.workspace, others[0]])
    again = workspaces_month_usage(workspaces=[others[0], team.workspace, others[1]])

    assert one[team.workspace.pk].in_flight_tokens == 400
    assert {pk: usage.in_flight_tokens for pk, usage in three.items()} == {
        team.workspace.pk: 400,
        others[0].pk: 0,
        others[1].pk: 7,
    }
    assert again == three
