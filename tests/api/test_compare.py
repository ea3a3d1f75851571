"""GET /api/v1/runs/{run_id}/compare/{other_run_id}: what changed between two runs of a creation."""

from typing import Any

import pytest

from creations.compare.services import comparison_compute
from tests.support.api import api_as
from tests.support.artifacts import Output
from tests.support.comparisons import _comparisons_forgotten, poster_png, text_lines, two_versions  # noqa: F401
from tests.support.fixtures.accounts import Team

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_comparisons_forgotten")]

OLDER = [Output("poster.png", poster_png()), Output("notes.md", text_lines(30)), Output("old.csv", b"a\n")]
NEWER = [
    Output("poster.png", poster_png(patch=(0, 0, 19, 9))),
    Output("notes.md", text_lines(30, changed={3: "third line, rewritten"})),
    Output("new.csv", b"b\n"),
]


def url(run_id: int, other_run_id: int) -> str:
    return f"/api/v1/runs/{run_id}/compare/{other_run_id}"


def by_path(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["path"]: item for item in body["files"]}


def test_it_lists_what_was_added_removed_and_changed_and_says_details_are_pending(team: Team) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    response = api_as(team.viewer).get(url(run_a.pk, run_b.pk))
    assert response.status_code == 200
    body = response.json()
    files = by_path(body)
    assert {path: item["state"] for path, item in files.items()} == {
        "new.csv": "added",
        "old.csv": "removed",
        "notes.md": "changed",
        "poster.png": "changed",
    }
    assert body["pending"] is True
    assert files["poster.png"]["detail_state"] == "pending"
    assert files["new.csv"]["a"] is None
    assert files["new.csv"]["b"]["sha256"]


def test_runs_of_two_creations_are_a_problem_with_a_reason(team: Team) -> None:
    run_a, _ = two_versions(workspace=team.workspace, author=team.owner, older=[], newer=[])
    _, other = two_versions(workspace=team.workspace, author=team.owner, older=[], newer=[])
    response = api_as(team.member).get(url(run_a.pk, other.pk))
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    assert "different creations" in response.json()["detail"]


def test_outsiders_and_missing_runs_are_not_found(team: Team) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    assert api_as(team.outsider).get(url(run_a.pk, run_b.pk)).status_code == 404
    missing = api_as(team.member).get(url(run_a.pk, run_b.pk + 1000))
    assert missing.status_code == 404
    assert missing["Content-Type"] == "application/problem+json"


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_once_made_the_details_are_in_the_answer(team: Team, settings: Any) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    comparison_compute(run_a_id=run_a.pk, run_b_id=run_b.pk)
    body = api_as(team.member).get(url(run_a.pk, run_b.pk)).json()
    assert body["pending"] is False
    files = by_path(body)
    pixels = files["poster.png"]["pixels"]
    assert pixels["changed_pixels"] == 200
    assert pixels["region"] == [0, 0, 20, 10]
    assert pixels["overlay_url"].startswith(f"{settings.ARTIFACT_ORIGIN}/d/")
    lines = files["notes.md"]["lines"]
    assert (lines["added"], lines["removed"]) == (1, 1)
    assert "+third line, rewritten" in lines["diff"]


def test_missing_details_are_asked_of_a_worker_once_while_a_client_polls(
    team: Team, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from celery import current_app

    sent: list[tuple[str, list[int]]] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args: sent.append((name, args)))
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(3):
            assert api_as(team.member).get(url(run_a.pk, run_b.pk)).json()["pending"] is True
    assert sent == [("creations.compare.tasks.compare_runs", [run_a.pk, run_b.pk])]
