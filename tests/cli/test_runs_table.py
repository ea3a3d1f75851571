"""`atelier runs`: pages followed by their cursor (on the configured server), then a table."""

from __future__ import annotations

import httpx

from atelier_cli.answers import RUN
from atelier_cli.commands.runs import runs_list, runs_table
from tests.cli.fake_api import FakeApi, run_answer


def run(n: int) -> dict:
    return run_answer(
        n,
        status="succeeded",
        workspace="ana",
        created_at="2026-03-01T10:00:00+00:00",
        model="demo",
        started_by="ana",
        title=f"Poster number {n}",
    )


def test_it_follows_the_cursor_until_it_has_enough() -> None:
    def page(request: httpx.Request) -> httpx.Response:
        if "cursor" not in request.url.params:
            # The answer's link names another host: only its cursor is used.
            return httpx.Response(
                200, json={"results": [run(5), run(4)], "next": "http://elsewhere.test/api/v1/runs?cursor=abc"}
            )
        return httpx.Response(200, json={"results": [run(3), run(2)], "next": "http://x/api/v1/runs?cursor=def"})

    api = FakeApi({("GET", "/runs"): page})
    runs = runs_list(api.client(), workspace="ana", status="succeeded", limit=3)
    assert [r.id for r in runs] == [5, 4, 3]
    first, second = api.sent("GET", "/runs")
    assert dict(first.url.params) == {"page_size": "3", "workspace": "ana", "status": "succeeded"}
    assert second.url.host == "atelier.test"
    assert second.url.params["cursor"] == "abc"


def test_the_table_has_a_row_per_run_with_titles_cut_to_fit() -> None:
    long_title = {**run(12), "title": "A very long title " * 10}
    lines = runs_table([RUN.validate_python(run(5)), RUN.validate_python(long_title)], width=80).splitlines()
    assert lines[0].split() == ["ID", "STATUS", "WORKSPACE", "CREATED", "BY", "MODEL", "TITLE"]
    assert lines[1].startswith("5   succeeded  ana ")
    assert lines[1].split()[5] == "ana"  # who asked for it
    assert lines[1].endswith("demo   Poster number 5")
    assert len(lines[2]) == 80
    assert lines[2].endswith("…")


def test_a_run_whose_model_is_hidden_until_you_vote_says_so_in_the_table() -> None:
    hidden = {**run(7), "model": None, "model_endpoint_id": None, "model_hidden": True}
    lines = runs_table([RUN.validate_python(hidden)], width=120).splitlines()
    assert lines[1].endswith("(hidden until you vote)  Poster number 7")
