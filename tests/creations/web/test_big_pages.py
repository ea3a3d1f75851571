"""Big galleries and long runs: pages walk an index (keyset pagination, a
window of steps), so what a page costs does not grow with what it could show."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from creations.models import Artifact, ArtifactKind, Run, RunEvent, RunStatus, Visibility
from tests.fixtures_accounts import Team
from tests.runs.factories import make_run

pytestmark = pytest.mark.django_db


def _finished(team: Team, *, visibility: str = Visibility.WORKSPACE) -> Run:
    run = make_run(team, visibility=visibility)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED, finished_at=timezone.now())
    run.refresh_from_db()
    return run


def _artifacts(run: Run, count: int) -> list[Artifact]:
    return [
        Artifact.objects.create(
            run=run, path=f"file-{i:03}.png", kind=ArtifactKind.IMAGE, size=1, content_type="image/png", file="x"
        )
        for i in range(count)
    ]


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


def test_the_gallery_and_the_run_page_cost_the_same_queries_at_any_size(
    team: Team, client: Client, django_assert_num_queries: Any, settings: Any
) -> None:
    settings.GALLERY_PAGE_SIZE, settings.RUN_PAGE_STEPS = 5, 5
    small, big = _finished(team), _finished(team)
    _artifacts(small, 2)
    _steps(small, 2)
    for _ in range(4):
        _artifacts(_finished(team), 10)
    _steps(big, 60)
    client.force_login(team.member)
    gallery = reverse("workspace_gallery", args=[team.workspace.slug])
    client.get(gallery)  # the session is loaded once per request; warm what a server has warm
    for url, queries in [
        (gallery, 5),
        (reverse("run_detail", args=[small.pk]), 8),
        (reverse("run_detail", args=[big.pk]), 8),
    ]:
        with django_assert_num_queries(queries):
            assert client.get(url).status_code == 200
