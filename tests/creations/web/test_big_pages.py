"""Big galleries and long runs: pages walk an index (keyset pagination, a
window of steps), so what a page costs does not grow with what it could show."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from creations.models import Artifact, Creation, Run, RunEvent, RunStatus, Visibility
from tests.support.factories import ArtifactFactory, RunFactory, UsageRecordFactory
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


def _finished(team: Team) -> Run:
    return RunFactory.create(finished=True, creation__workspace=team.workspace, creation__author=team.owner)


def _artifacts(run: Run, count: int) -> list[Artifact]:
    return ArtifactFactory.create_batch(count, run=run)


def _steps(run: Run, count: int, *, output: str = "ok\n") -> None:
    items: list[tuple[str, dict[str, Any]]] = []
    for step in range(1, count + 1):
        items += [
            ("step_started", {"step": step, "remaining": count - step}),
            ("assistant_message", {"step": step, "content": f"Thinking about step {step}.", "reasoning": None}),
            (
                "tool_call",
                {
                    "step": step,
                    "call_id": f"c{step}",
                    "name": "execute_bash",
                    "arguments": {"command": f"echo step-{step}"},
                },
            ),
            (
                "tool_result",
                {
                    "step": step,
                    "call_id": f"c{step}",
                    "name": "execute_bash",
                    "output": output,
                    "is_error": False,
                    "exit_code": 0,
                    "duration": 0.1,
                },
            ),
        ]
    items.append(("finished", {"reason": "submitted", "steps": count, "message": "All done."}))
    RunEvent.objects.bulk_create(
        RunEvent(run=run, seq=seq, kind=kind, payload=payload) for seq, (kind, payload) in enumerate(items, 1)
    )


def _tiles(html: str) -> list[str]:
    return re.findall(r"<strong>(file-\d+\.png)</strong>", html)


def _shown_steps(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<li class="step" data-step="(\d+)"', html)]


def test_the_older_links_walk_the_whole_gallery_once_newest_first(team: Team, client: Client, settings: Any) -> None:
    settings.GALLERY_PAGE_SIZE = 4
    made = _artifacts(_finished(team), 10)
    client.force_login(team.member)
    url, seen, pages = reverse("workspace_gallery", args=[team.workspace.slug]), [], 0
    next_url: str | None = url
    while next_url is not None:
        response = client.get(next_url)
        seen += _tiles(response.content.decode())
        older = response.context["next_page_url"]
        next_url = f"{url}{older}" if older else None
        pages += 1
    newest_first = [a.path for a in sorted(made, key=lambda a: (a.created_at, a.pk), reverse=True)]
    assert seen == newest_first
    assert pages == 3


@pytest.mark.parametrize("cursor", ["x", "-1", "99999999999999999999999-1", "12-", "1.5-2", "\uff11\uff12-\uff13"])
def test_a_cursor_that_is_not_one_shows_the_newest_page(team: Team, client: Client, cursor: str) -> None:
    _artifacts(_finished(team), 3)
    client.force_login(team.member)
    response = client.get(reverse("workspace_gallery", args=[team.workspace.slug]), {"older": cursor})
    assert response.status_code == 200
    assert len(_tiles(response.content.decode())) == 3


def test_a_long_run_shows_its_latest_steps_and_loads_earlier_ones_on_demand(
    team: Team, client: Client, settings: Any
) -> None:
    settings.RUN_PAGE_STEPS = 30
    run = _finished(team)
    _steps(run, 300)
    client.force_login(team.member)
    page = client.get(reverse("run_detail", args=[run.pk])).content.decode()
    assert _shown_steps(page) == list(range(271, 301))
    assert "All done." in page
    assert "Show earlier steps (1\u2013270)" in page

    fragment_url = re.search(r'hx-get="([^"]+)"', page)
    assert fragment_url is not None
    earlier = client.get(fragment_url.group(1).replace("&amp;", "&")).content.decode()
    assert _shown_steps(earlier) == list(range(241, 271))
    assert "Show earlier steps (1\u2013240)" in earlier
    assert "echo step-241" in earlier


def test_the_live_page_of_a_long_run_streams_only_its_latest_steps(team: Team, client: Client, settings: Any) -> None:
    """Opening a run of 300 steps replays 30 of them over the websocket, not all 1,200 events."""
    settings.RUN_PAGE_STEPS = 30
    run = RunFactory.create(status=RunStatus.RUNNING, creation__workspace=team.workspace, creation__author=team.owner)
    _steps(run, 300)
    Run.objects.filter(pk=run.pk).update(last_seq=RunEvent.objects.filter(run=run).count(), prompt_tokens=1234)
    client.force_login(team.member)
    page = client.get(reverse("run_detail", args=[run.pk])).content.decode()

    after = int(re.search(r'data-after="(\d+)"', page).group(1))  # type: ignore[union-attr]
    first_live = RunEvent.objects.get(run=run, seq=after + 1)
    assert (first_live.kind, first_live.payload["step"]) == ("step_started", 271)
    assert 'data-tokens="1234"' in page  # the tokens of the steps not replayed are counted already
    earlier = client.get(reverse("run_steps", args=[run.pk]) + f"?before={after + 1}").content.decode()
    assert _shown_steps(earlier) == list(range(241, 271))


def test_a_short_live_run_streams_from_its_first_event(team: Team, client: Client) -> None:
    run = RunFactory.create(status=RunStatus.RUNNING, creation__workspace=team.workspace, creation__author=team.owner)
    _steps(run, 3)
    client.force_login(team.member)
    page = client.get(reverse("run_detail", args=[run.pk])).content.decode()
    assert 'data-after="0"' in page
    assert "Show earlier steps" not in page


def test_a_short_run_shows_every_step_and_no_earlier_control(team: Team, client: Client) -> None:
    run = _finished(team)
    _steps(run, 3)
    client.force_login(team.member)
    page = client.get(reverse("run_detail", args=[run.pk])).content.decode()
    assert _shown_steps(page) == [1, 2, 3]
    assert "Show earlier steps" not in page


def test_a_long_output_shows_its_start_and_links_to_the_whole_text(team: Team, client: Client, settings: Any) -> None:
    settings.RUN_PAGE_OUTPUT_PREVIEW_CHARS = 100
    run = _finished(team)
    output = "".join(f"line {i}\n" for i in range(500))
    _steps(run, 1, output=output)
    client.force_login(team.member)
    page = client.get(reverse("run_detail", args=[run.pk])).content.decode()
    assert "line 3\n" in page
    assert "line 499" not in page
    whole = re.search(r'<a href="([^"]+)"[^>]*>Show the whole output', page)
    assert whole is not None
    response = client.get(whole.group(1))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert response["Content-Security-Policy"] == "default-src 'none'; sandbox"
    assert response.content.decode() == output


@pytest.mark.parametrize("who", ["outsider", "anonymous"])
def test_earlier_steps_and_whole_outputs_are_hidden_from_outsiders(team: Team, client: Client, who: str) -> None:
    run = _finished(team)
    _steps(run, 2)
    if who == "outsider":
        client.force_login(team.outsider)
    assert client.get(reverse("run_steps", args=[run.pk]), {"before": "3"}).status_code == 404
    assert client.get(reverse("run_event_overflow", args=[run.pk, 4, "output"])).status_code == 404


# What each page costs, pinned: an N+1 (or a lost select_related) changes a number here.
# Every page a signed-in person sees counts their unread notifications (the bell): one query each.
PINNED_QUERY_COUNTS = {
    "dashboard": 10,  # with the members count, and the bell's unread count on every signed-in page
    "usage page": 11,
    "workspace gallery": 8,  # with the person and model filters' choices
    "public gallery": 7,  # likewise
    # With the schedule panel's one query (creations/schedules/templatetags/schedule_panel.py), the
    # creation's comments, whether the reader follows it, and counting the view.
    "creation page, short run": 15,
    "creation page, long run": 15,
    "run page, short run": 9,
    "run page, long run": 9,
}


def test_each_page_costs_the_same_queries_at_any_size(team: Team, client: Client, settings: Any) -> None:
    settings.GALLERY_PAGE_SIZE, settings.RUN_PAGE_STEPS = 5, 5
    small, big = _finished(team), _finished(team)
    _artifacts(small, 2)
    _steps(small, 2)
    for _ in range(4):
        _artifacts(_finished(team), 10)
    _steps(big, 60)
    Creation.objects.filter(runs__in=[small, big]).update(visibility=Visibility.PUBLIC)
    for run in Run.objects.filter(status=RunStatus.SUCCEEDED):
        UsageRecordFactory.create(run=run)  # what ending each run wrote: the usage page's rows
    client.force_login(team.member)
    gallery = reverse("workspace_gallery", args=[team.workspace.slug])
    client.get(gallery)  # warm what a running server has warm
    pages = {
        "dashboard": reverse("workspace_dashboard", args=[team.workspace.slug]),
        "usage page": reverse("workspace_usage", args=[team.workspace.slug]),
        "workspace gallery": gallery,
        "public gallery": reverse("public_gallery"),
        "creation page, short run": reverse("creation_detail", args=[small.creation_id]),
        "creation page, long run": reverse("creation_detail", args=[big.creation_id]),
        "run page, short run": reverse("run_detail", args=[small.pk]),
        "run page, long run": reverse("run_detail", args=[big.pk]),
    }
    counts = {}
    for name, url in pages.items():
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        counts[name] = len(queries.captured_queries)
    assert counts == PINNED_QUERY_COUNTS


def _many_files(run: Run, count: int) -> None:
    Artifact.objects.bulk_create(
        Artifact(
            run=run,
            workspace_id=run.creation.workspace_id,
            path=f"many/file-{n:04}.png",
            kind="image",
            size=1,
            content_type="image/png",
            file="artifacts/placeholder.png",
        )
        for n in range(count)
    )


def _listed_files(html: str) -> list[str]:
    return re.findall(r'<h3 id="artifact-\d+-name"><a href="[^"]+">([^<]+)</a></h3>', html)


@pytest.mark.parametrize("page", ["run_detail", "creation_detail", "run_artifacts"])
def test_a_run_of_a_thousand_files_lists_them_a_page_at_a_time(
    team: Team, client: Client, settings: Any, page: str
) -> None:
    settings.RUN_PAGE_ARTIFACTS = 24
    run = _finished(team)
    _many_files(run, 1000)
    client.force_login(team.member)
    url = reverse(page, args=[run.creation_id if page == "creation_detail" else run.pk])

    response = client.get(url)
    html = response.content.decode()
    assert _listed_files(html) == [f"many/file-{n:04}.png" for n in range(24)]
    assert "Files 1\u201324 of 1,000" in html
    assert "Page 1 of 42" in html
    assert len(response.content) < 100_000

    last = client.get(url, {"page": "42"}).content.decode()
    assert _listed_files(last) == [f"many/file-{n:04}.png" for n in range(984, 1000)]
    assert "Files 985\u20131,000 of 1,000" in last


def test_the_pager_links_walk_every_file_of_a_run_once_in_path_order(
    team: Team, client: Client, settings: Any
) -> None:
    settings.RUN_PAGE_ARTIFACTS = 7
    run = _finished(team)
    _many_files(run, 30)
    client.force_login(team.member)
    url, seen = reverse("run_detail", args=[run.pk]), []
    next_url: str | None = url
    while next_url is not None:
        html = client.get(next_url).content.decode()
        seen += _listed_files(html)
        found = re.search(r'<a href="([^"]+)" rel="next">', html)
        next_url = found.group(1).replace("&amp;", "&") if found else None
    assert seen == [f"many/file-{n:04}.png" for n in range(30)]


@pytest.mark.parametrize("number", ["x", "-1", "0", "99999", "1.5", "\uff12"])
def test_a_page_number_that_is_not_one_shows_a_page_of_files(team: Team, client: Client, number: str) -> None:
    run = _finished(team)
    _many_files(run, 30)
    client.force_login(team.member)
    for url in (reverse("run_detail", args=[run.pk]), reverse("creation_detail", args=[run.creation_id])):
        response = client.get(url, {"page": number})
        assert response.status_code == 200
        assert _listed_files(response.content.decode())


# A run of a thousand files: its pages read one page of them and count them, whatever the count.
PINNED_BIG_RUN_QUERY_COUNTS = {"creation page": 16, "run page": 10, "run's files (live page)": 8}


def test_the_pages_of_a_run_of_a_thousand_files_cost_pinned_queries(team: Team, client: Client) -> None:
    run = _finished(team)
    _many_files(run, 1000)
    client.force_login(team.member)
    client.get(reverse("workspace_gallery", args=[team.workspace.slug]))  # warm what a running server has warm
    pages = {
        "creation page": reverse("creation_detail", args=[run.creation_id]),
        "run page": reverse("run_detail", args=[run.pk]),
        "run's files (live page)": reverse("run_artifacts", args=[run.pk]),
    }
    counts = {}
    for name, url in pages.items():
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url, {"page": "3"}).status_code == 200
        counts[name] = len(queries.captured_queries)
    assert counts == PINNED_BIG_RUN_QUERY_COUNTS


@pytest.mark.parametrize("page", ["run_detail", "creation_detail", "run_artifacts"])
def test_a_run_that_left_out_thousands_of_files_says_how_many_and_names_the_first(
    team: Team, client: Client, page: str
) -> None:
    run = _finished(team)
    _many_files(run, 1)
    named = [{"name": f"many/f{n:05}.txt", "reason": "more than 1000 files"} for n in range(999, 1099)]
    payload = {"items": [], "rejected": named, "rejected_count": 19_001}
    RunEvent.objects.create(run=run, seq=2, kind="artifacts", payload=payload)
    client.force_login(team.member)
    html = client.get(reverse(page, args=[run.creation_id if page == "creation_detail" else run.pk])).content.decode()
    assert "19,001 files of this run were not kept; the first 100 are named here." in html
    assert html.count("</code>: more than 1000 files</li>") == 100
    assert "<code>many/f00999.txt</code>" in html
