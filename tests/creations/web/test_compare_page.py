"""The compare page: two versions of a creation side by side, with what changed in them."""

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from creations.compare.services import comparison_compute
from tests.support.artifacts import Output
from tests.support.comparisons import _comparisons_forgotten, poster_png, text_lines, two_versions  # noqa: F401
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("_comparisons_forgotten"),
    pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume"),
]

OLDER = [Output("poster.png", poster_png()), Output("notes.md", text_lines(40)), Output("draft.txt", b"draft\n")]
NEWER = [
    Output("poster.png", poster_png(patch=(20, 20, 59, 59))),
    Output("notes.md", text_lines(40, changed={10: "<script>alert(1)</script> is now escaped"})),
    Output("final.txt", b"final\n"),
]


def compare_url(creation_pk: int, **query: int) -> str:
    url = reverse("creation_compare", args=[creation_pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def test_the_page_lists_added_removed_and_changed_files_while_details_are_made(team: Team, client: Client) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    response = signed_in(client, team.viewer).get(compare_url(run_a.creation_id, a=run_a.pk, b=run_b.pk))
    html = response.content.decode()
    assert response.status_code == 200
    assert re.search(r"file-added\">added</span> <a [^>]*><code>final.txt</code>", html)
    assert re.search(r"file-removed\">removed</span> <code>draft.txt</code>", html)
    assert html.count('file-changed">changed</span>') == 2
    assert html.count('data-role="compare-pending"') == 2
    assert 'hx-trigger="load delay:2s"' in html  # and it looks again until they are there


def test_without_a_choice_the_two_latest_runs_are_compared(team: Team, client: Client) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    html = signed_in(client, team.member).get(compare_url(run_a.creation_id)).content.decode()
    assert f"v{run_a.version} → v{run_b.version}" in html
    assert f'<option value="{run_b.pk}" selected>' in html


def test_runs_of_another_creation_are_refused_with_a_reason(team: Team, client: Client) -> None:
    run_a, _ = two_versions(workspace=team.workspace, author=team.owner, older=[], newer=[])
    _, other = two_versions(workspace=team.workspace, author=team.owner, older=[], newer=[])
    response = signed_in(client, team.member).get(compare_url(run_a.creation_id, a=run_a.pk, b=other.pk))
    assert response.status_code == 400
    assert "versions of different creations" in response.content.decode()


def test_outsiders_get_not_found(team: Team, client: Client) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    response = signed_in(client, team.outsider).get(compare_url(run_a.creation_id, a=run_a.pk, b=run_b.pk))
    assert response.status_code == 404


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_pictures_diff_and_overlay_come_from_the_artifact_origin_and_text_is_escaped(
    team: Team, client: Client, settings: Any
) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    assert comparison_compute(run_a_id=run_a.pk, run_b_id=run_b.pk) == 2
    html = signed_in(client, team.member).get(compare_url(run_a.creation_id, a=run_a.pk, b=run_b.pk)).content.decode()
    assert "compare-pending" not in html
    assert "hx-trigger" not in html  # nothing left to wait for
    text = " ".join(html.split())
    summary = "<strong>1.33%</strong> of pixels changed (1600 of 120000), in the region 20,20 \u2013 60,60"
    assert f"{summary} of 400\u00d7300" in text
    sources = re.findall(r'<img src="([^"]+)"', html)
    assert len(sources) == 3  # both versions and what changed
    assert all(src.startswith(f"{settings.ARTIFACT_ORIGIN}/") for src in sources)
    overlay = re.search(r'<img src="([^"]+)"[^>]*data-role="overlay"', html)
    assert overlay
    assert "/d/" in overlay.group(1)
    assert '<span class="diff-add">+&lt;script&gt;alert(1)&lt;/script&gt; is now escaped</span>' in html
    assert '<span class="diff-del">-line 10 of the report</span>' in html
    assert "<script>alert(1)" not in html


@pytest.mark.docker
@pytest.mark.alone  # in a process that has opened no browser: Playwright's loop refuses the async file views
@pytest.mark.usefixtures("sandbox_image")
def test_the_overlay_is_served_on_the_artifact_origin_to_those_who_see_the_run(
    team: Team, client: Client, settings: Any
) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    comparison_compute(run_a_id=run_a.pk, run_b_id=run_b.pk)
    html = signed_in(client, team.member).get(compare_url(run_a.creation_id, a=run_a.pk, b=run_b.pk)).content.decode()
    overlay = re.search(r'<img src="([^"]+)"[^>]*data-role="overlay"', html)
    assert overlay
    path = overlay.group(1).removeprefix(settings.ARTIFACT_ORIGIN)
    host = settings.ARTIFACT_ORIGIN.split("://", 1)[1]
    response = Client().get(path, headers={"host": host})
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response).startswith(b"\x89PNG")
    assert not response.cookies
    assert Client().get(path).status_code == 404  # not on the platform's origin
    team.workspace.memberships.filter(user=team.member).delete()  # and not once they have left the workspace
    assert Client().get(path, headers={"host": host}).status_code == 404


def test_the_page_stops_looking_for_details_after_a_while(team: Team, client: Client) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=OLDER, newer=NEWER)
    url = compare_url(run_a.creation_id, a=run_a.pk, b=run_b.pk)
    html = signed_in(client, team.member).get(url).content.decode()
    assert f'hx-get="{url.replace("&", "&amp;")}&amp;look=1"' in html
    html = client.get(f"{url}&look=90").content.decode()
    assert "hx-trigger" not in html
    assert "reload the page to look again" in html


def queries_for(team: Team, client: Client, files: int) -> int:
    older = [Output(f"part-{i}.md", text_lines(5)) for i in range(files)] + [Output("gone.txt", b"x\n")]
    newer = [Output(f"part-{i}.md", text_lines(5, changed={1: "new"})) for i in range(files)]
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=older, newer=newer + OLDER[:1])
    signed_in(client, team.member)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(compare_url(run_a.creation_id, a=run_a.pk, b=run_b.pk)).status_code == 200
    return len(queries)


def test_the_page_makes_as_many_queries_for_30_files_as_for_3(team: Team, client: Client) -> None:
    assert queries_for(team, client, 3) == queries_for(team, client, 30)
