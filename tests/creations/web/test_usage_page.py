"""The usage page and its CSV export: what each role sees, months asked for badly,
the export's rows, and private creations' titles kept from everyone but their author."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from creations.models import Creation, RunStatus, UsageRecord, Visibility
from creations.runs.state import run_finish
from creations.usage.ledger import usage_record_completion
from tests.support.factories import ArtifactFactory, CreationFactory, UsageRecordFactory, make_run
from tests.support.fixtures.accounts import Team

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]

MONTH = "2025-03"  # a month long past, so what these tests see never depends on today


def march(day: int, hour: int = 12) -> datetime:
    return datetime(2025, 3, day, hour, tzinfo=UTC)


def spend(
    team: Team,
    person: User,
    *,
    tokens: int,
    when: datetime,
    seconds: float = 60,
    model: str = "house-gpt",
    title: str = "A poster",
    visibility: str = Visibility.WORKSPACE,
    creation: Creation | None = None,
) -> UsageRecord:
    """A run of `person`'s that ended at `when`, as the ledger records it."""
    creation = creation or CreationFactory.create(
        workspace=team.workspace, author=person, title=title, visibility=visibility
    )
    return UsageRecordFactory.create(
        workspace=team.workspace,
        creation=creation,
        creation_title=title,
        person=person,
        model_name=model,
        prompt_tokens=tokens * 3 // 4,
        completion_tokens=tokens - tokens * 3 // 4,
        sandbox_seconds=seconds,
        bytes_stored=2048,
        recorded_at=when,
    )


def page(client: Client, team: Team, user: User | None, **query: str) -> Any:
    if user is not None:
        client.force_login(user)
    return client.get(reverse("workspace_usage", args=[team.workspace.slug]), query)


def export(client: Client, team: Team, user: User | None, **query: str) -> Any:
    if user is not None:
        client.force_login(user)
    return client.get(reverse("workspace_usage_csv", args=[team.workspace.slug]), query)


def csv_rows(response: Any) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


@pytest.fixture
def march_spending(team: Team) -> Team:
    spend(team, team.owner, tokens=40_000, when=march(3), model="house-gpt", title="Tokyo food map")
    spend(team, team.owner, tokens=8_000, when=march(3, 18), model="tiny-llama", title="Birthday countdown")
    spend(team, team.member, tokens=20_000, when=march(10), seconds=600, model="house-gpt", title="Piano piece")
    return team


# --- who sees what ----------------------------------------------------------------------


@pytest.mark.parametrize("who", ["owner", "member"])
def test_members_see_the_quotas_each_persons_days_and_the_costliest_creations(
    march_spending: Team, client: Client, who: str
) -> None:
    team = march_spending
    response = page(client, team, getattr(team, who), month=MONTH)

    assert response.status_code == 200
    html = response.content.decode()
    for label in ("Runs at once", "Model tokens", "Sandbox time", "Storage"):
        assert label in html
    assert "68,000 in March 2025" in html  # the month's tokens beside the monthly quota
    assert f"of {team.workspace.quota_month_tokens:,} a month" in html
    tokens_chart = response.context["charts"][0]
    assert [item.full_name for item in tokens_chart.legend] == ["alice", "bob"]
    assert [c.total_text for c in tokens_chart.columns if c.total_text] == ["48k", "20k"]
    assert [c.tick_text for c in tokens_chart.columns if c.segments] == ["3", "10"]
    assert [(item.title, item.tokens) for item in response.context["costliest"]] == [
        ("Tokyo food map", 40_000),
        ("Piano piece", 20_000),
        ("Birthday countdown", 8_000),
    ]
    assert 'href="/creations/' in html
    assert "Download CSV" in html


def test_the_days_split_by_model_on_asking(march_spending: Team, client: Client) -> None:
    response = page(client, march_spending, march_spending.member, month=MONTH, by="model")

    legend = response.context["charts"][0].legend
    assert [(item.full_name, item.total_text) for item in legend] == [
        ("house-gpt", "60k tokens"),
        ("tiny-llama", "8k tokens"),
    ]
    assert 'aria-current="true">By model' in response.content.decode()


def test_viewers_see_the_totals_and_nobodys_share(march_spending: Team, client: Client) -> None:
    response = page(client, march_spending, march_spending.viewer, month=MONTH)

    assert response.status_code == 200
    html = response.content.decode()
    assert "68,000 in March 2025" in html
    assert [s.name for s in response.context["daily"].series] == ["All runs"]
    assert response.context["charts"][0].legend == []
    for share in ("alice", "bob", "house-gpt", "Tokyo food map", "Costliest creations", "Download CSV"):
        assert share not in html
    assert export(client, march_spending, None, month=MONTH).status_code == 403


@pytest.mark.parametrize("view", ["workspace_usage", "workspace_usage_csv"])
def test_outsiders_are_told_nothing_and_the_signed_out_log_in(team: Team, client: Client, view: str) -> None:
    url = reverse(view, args=[team.workspace.slug])
    assert client.get(url).status_code == 302
    assert "/accounts/login/" in client.get(url)["Location"]
    client.force_login(team.outsider)
    assert client.get(url).status_code == 404


def test_the_nav_links_to_the_usage_page(team: Team, client: Client) -> None:
    client.force_login(team.viewer)
    html = client.get(reverse("workspace_dashboard", args=[team.workspace.slug])).content.decode()
    assert f'href="{reverse("workspace_usage", args=[team.workspace.slug])}">Usage</a>' in html


# --- months ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("2025-13", "the month is a number from 01 to 12"),
        ("March", "is not a month: give it as YEAR-MONTH"),
        ("2025-3", "is not a month"),
        ("<b>1999</b>", "is not a month"),
        ("2999-01", "January 2999 has not begun"),
        ("1969-07", "There is no usage before 2000"),
    ],
)
def test_a_month_that_is_not_one_is_explained_and_this_month_shown(
    team: Team, client: Client, asked: str, said: str
) -> None:
    response = page(client, team, team.member, month=asked)

    assert response.status_code == 400
    html = response.content.decode()
    assert said in html
    assert "<b>1999</b>" not in html  # what was typed is shown as text
    this_month = timezone.now().strftime("%B %Y")
    assert f"Showing {this_month} instead." in html
    bad_export = export(client, team, None, month=asked)
    assert bad_export.status_code == 400
    assert said in bad_export.content.decode()


def test_a_past_month_links_both_ways_and_this_month_only_back(march_spending: Team, client: Client) -> None:
    html = page(client, march_spending, march_spending.member, month=MONTH).content.decode()
    assert "?month=2025-02&amp;by=person" in html
    assert "?month=2025-04&amp;by=person" in html
    current = page(client, march_spending, None)
    assert current.context["next_url"] is None
    assert page(client, march_spending, None, month="2000-01").context["previous_url"] is None


# --- this month against the quotas ---------------------------------------------------------


def test_this_months_bars_count_runs_going_now_and_storage_kept(team: Team, client: Client) -> None:
    team.workspace.quota_concurrent_runs = 2
    team.workspace.quota_month_tokens = 10_000
    team.workspace.save()
    spend(team, team.member, tokens=6_000, when=timezone.now())
    make_run(team, status=RunStatus.RUNNING, started_at=timezone.now() + timedelta(seconds=1), prompt_tokens=3_000)
    make_run(team, status=RunStatus.QUEUED)
    ArtifactFactory.create(run__creation__workspace=team.workspace, size=3 * 1024 * 1024)

    response = page(client, team, team.member)

    meters = {meter.key: meter for meter in response.context["meters"]}
    assert (meters["concurrent"].used, meters["concurrent"].note) == (1, "1 waiting for a slot")
    assert (meters["tokens"].used, meters["tokens"].percent, meters["tokens"].level) == (9_000, 90, "close")
    assert meters["storage"].used == 3 * 1024 * 1024
    html = response.content.decode()
    assert "9,000 this month" in html
    assert 'aria-valuenow="9000"' in html


def test_a_month_past_its_quota_says_so(team: Team, client: Client) -> None:
    team.workspace.quota_month_tokens = 1_000
    team.workspace.save()
    spend(team, team.member, tokens=2_500, when=timezone.now())

    html = page(client, team, team.member).content.decode()

    assert "250% used — over the quota" in html
    assert 'class="quota quota-full" data-quota="tokens"' in html


# --- private creations --------------------------------------------------------------------


def test_a_private_creations_title_is_shown_to_its_author_alone(team: Team, client: Client) -> None:
    spend(team, team.owner, tokens=90_000, when=march(5), title="Secret launch plan", visibility=Visibility.PRIVATE)

    as_member = page(client, team, team.member, month=MONTH)
    as_author = page(Client(), team, team.owner, month=MONTH)

    assert "Secret launch plan" not in as_member.content.decode()
    assert [(c.title, c.url) for c in as_member.context["costliest"]] == [("A private creation", None)]
    assert "Secret launch plan" in as_author.content.decode()
    assert as_author.context["costliest"][0].url is not None
    member_rows = csv_rows(export(client, team, None, month=MONTH))
    assert [row["creation"] for row in member_rows] == ["A private creation"]
    assert "Secret launch plan" not in str(member_rows)
    assert [row["creation"] for row in csv_rows(export(Client(), team, team.owner, month=MONTH))] == [
        "Secret launch plan"
    ]


def test_a_deleted_creation_is_named_to_nobody(team: Team, client: Client) -> None:
    record = spend(team, team.member, tokens=5_000, when=march(7), title="Old poster")
    assert record.creation is not None
    record.creation.delete()

    response = page(client, team, team.member, month=MONTH)

    assert [(c.title, c.url) for c in response.context["costliest"]] == [("A deleted creation", None)]
    assert [row["creation"] for row in csv_rows(export(client, team, None, month=MONTH))] == ["A deleted creation"]


def test_an_evaluations_plain_tasks_read_as_the_evaluation_not_a_deleted_creation(team: Team, client: Client) -> None:
    deleted = spend(team, team.member, tokens=1_000, when=march(7), title="Old poster")
    assert deleted.creation is not None
    deleted.creation.delete()
    for tokens in (3_000, 2_000):  # two tasks of one suite, as plain_item_answer records them
        record = usage_record_completion(
            workspace_id=team.workspace.pk,
            person_id=team.owner.pk,
            model_endpoint=None,
            title="Evaluation: Squares (plain)",
            succeeded=True,
            prompt_tokens=tokens,
            completion_tokens=0,
        )
        UsageRecord.objects.filter(pk=record.pk).update(recorded_at=march(8))

    response = page(client, team, team.member, month=MONTH)

    assert [(c.title, c.url, c.runs, c.tokens) for c in response.context["costliest"]] == [
        ("Evaluation: Squares (plain)", None, 2, 5_000),
        ("A deleted creation", None, 1, 1_000),
    ]
    assert [row["creation"] for row in csv_rows(export(client, team, None, month=MONTH))] == [
        "A deleted creation",
        "Evaluation: Squares (plain)",
        "Evaluation: Squares (plain)",
    ]


# --- the CSV export ---------------------------------------------------------------------------


def test_the_export_has_one_row_per_run_of_the_month_oldest_first(march_spending: Team, client: Client) -> None:
    team = march_spending
    spend(team, team.member, tokens=1, when=march(31, 23) + timedelta(hours=1))  # April: not in March's export

    response = export(client, team, team.member, month=MONTH)

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="usage-{team.workspace.slug}-2025-03.csv"'
    rows = csv_rows(response)
    assert [(r["date"], r["person"], r["model"], r["creation"]) for r in rows] == [
        ("2025-03-03", "alice", "house-gpt", "Tokyo food map"),
        ("2025-03-03", "alice", "tiny-llama", "Birthday countdown"),
        ("2025-03-10", "bob", "house-gpt", "Piano piece"),
    ]
    assert rows[2] == {
        "date": "2025-03-10",
        "ended_at_utc": "2025-03-10T12:00:00+00:00",
        "person": "bob",
        "model": "house-gpt",
        "creation": "Piano piece",
        "status": "succeeded",
        "prompt_tokens": "15000",
        "completion_tokens": "5000",
        "sandbox_seconds": "600.0",
        "bytes_stored": "2048",
    }


def test_the_export_without_a_month_is_this_months(team: Team, client: Client) -> None:
    spend(team, team.member, tokens=10, when=timezone.now(), title="Today's map")
    spend(team, team.member, tokens=10, when=march(2), title="Long ago")

    rows = csv_rows(export(client, team, team.member))

    assert [row["creation"] for row in rows] == ["Today's map"]


def test_the_export_keeps_typed_formulas_as_text(team: Team, client: Client) -> None:
    spend(team, team.member, tokens=10, when=march(2), title='=HYPERLINK("http://x.example","click")')

    rows = csv_rows(export(client, team, team.member, month=MONTH))

    assert rows[0]["creation"] == '\'=HYPERLINK("http://x.example","click")'


def test_a_run_recorded_when_it_ends_appears_in_the_export(team: Team, client: Client) -> None:
    run = make_run(team, status=RunStatus.RUNNING, started_at=timezone.now() + timedelta(seconds=1), prompt_tokens=700)
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="The agent submitted its work.")

    rows = csv_rows(export(client, team, team.member))
    assert [(row["person"], row["prompt_tokens"], row["status"]) for row in rows] == [("alice", "700", "succeeded")]


def test_plain_task_records_kept_before_they_were_marked_read_as_their_evaluation(team: Team) -> None:
    """The migration that marks them: only records with no creation, run, sandbox time or files and a
    plain task's title; a deleted creation's record stays unnamed whatever its title."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("creations.migrations.0018_usagerecord_source")
    kept = UsageRecordFactory.create(
        workspace=team.workspace,
        creation=None,
        creation_title="Squares · t1 · plain",
        sandbox_seconds=0,
        bytes_stored=0,
    )
    deleted = spend(team, team.member, tokens=1_000, when=march(7), title="Launch · draft · plain")
    assert deleted.creation is not None
    deleted.creation.delete()

    migration.mark_plain_evaluation_records(apps, None)

    kept.refresh_from_db()
    deleted.refresh_from_db()
    assert (kept.source, kept.creation_title) == ("evaluation", "Evaluation: Squares (plain)")
    assert deleted.source == "run"
