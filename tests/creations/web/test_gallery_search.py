"""Finding things in a gallery: search, the person and model filters, most viewed first, and one
tile per creation; every page of them a keyset page that costs the same at any size."""

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from creations.models import Creation, Run, Visibility
from creations.web import gallery
from tests.support.factories import ArtifactFactory, ModelEndpointFactory, RunFactory
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in

pytestmark = pytest.mark.django_db


def _made(team: Team, title: str, brief: str, files: list[str], **creation: Any) -> Run:
    author = creation.pop("author", team.owner)
    run = RunFactory.create(
        finished=True,
        creation__workspace=team.workspace,
        creation__author=author,
        creation__title=title,
        creation__brief=brief,
        **{f"creation__{name}": value for name, value in creation.items()},
    )
    for path in files:
        kind = {"png": "image", "html": "map", "md": "markdown", "wav": "audio"}[path.rsplit(".", 1)[1]]
        ArtifactFactory.create(run=run, path=path, kind=kind)
    return run


def _names(html: str) -> list[str]:
    return re.findall(r"<strong>([^<]+)</strong>", html)


def _gallery(client: Client, team: Team, **params: str) -> str:
    response = client.get(reverse("workspace_gallery", args=[team.workspace.slug]), params)
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def studio(team: Team) -> Team:
    _made(team, "Tokyo food", "Three days of eating in Tokyo, one pin per meal", ["tokyo.html"])
    _made(team, "Poster", "A poster for the summer fair", ["fair-poster.png", "notes.md"])
    _made(team, "Lullaby", "A calm piano piece for walking home", ["evening.wav"], author=team.member)
    return team


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("tokyo", ["tokyo.html"]),  # in the title
        ("summer fair", ["fair-poster.png", "notes.md"]),  # in the brief, words in any order
        ("maps", []),
        ("meals", ["tokyo.html"]),  # the brief says "meal": stemmed
        ("walk", ["evening.wav"]),  # the brief says "walking"
        ("poster.p", ["fair-poster.png"]),  # part of a file name
        ("notes", ["notes.md"]),
        ("piano -calm", []),  # a web search: "-" leaves out
        ('"calm piano"', ["evening.wav"]),
        ("%", []),
        ("a' OR 1=1 --", []),
    ],
)
def test_the_search_finds_titles_briefs_and_file_names(
    studio: Team, client: Client, text: str, found: list[str]
) -> None:
    assert sorted(_names(_gallery(signed_in(client, studio.member), studio, q=text))) == sorted(found)


def test_without_postgresql_the_search_looks_for_the_text_as_typed(
    studio: Team, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded default (SQLite) has no full-text search: title, brief and file names contain the text."""

    class SQLite:
        vendor = "sqlite"

    monkeypatch.setattr(gallery, "connection", SQLite())
    client = signed_in(client, studio.member)
    assert _names(_gallery(client, studio, q="TOKYO")) == ["tokyo.html"]
    assert sorted(_names(_gallery(client, studio, q="summer fair"))) == ["fair-poster.png", "notes.md"]
    assert _names(_gallery(client, studio, q="poster.p")) == ["fair-poster.png"]
    assert _names(_gallery(client, studio, q="meals")) == []


def test_a_search_never_finds_what_the_person_may_not_see(team: Team, client: Client) -> None:
    _made(team, "Secret plan", "Top secret", ["secret.png"], visibility=Visibility.PRIVATE)
    assert _names(_gallery(signed_in(client, team.member), team, q="secret")) == []
    assert "secret.png" not in client.get(reverse("public_gallery"), {"q": "secret"}).content.decode()
    assert _names(_gallery(signed_in(Client(), team.owner), team, q="secret")) == ["secret.png"]


def test_the_gallery_filters_by_person_and_model(studio: Team, client: Client) -> None:
    endpoint = ModelEndpointFactory.create(workspace=studio.workspace, name="Our GPT", model="gpt-4o")
    _made(studio, "Map", "A map of stops", ["stops.html"], model_endpoint=endpoint)
    client = signed_in(client, studio.member)
    assert _names(_gallery(client, studio, person="bob")) == ["evening.wav"]
    assert _names(_gallery(client, studio, model="gpt-4o")) == ["stops.html"]
    assert "stops.html" not in _names(_gallery(client, studio, model=gallery.DEMO_MODEL))
    assert len(_names(_gallery(client, studio, model=gallery.DEMO_MODEL))) == 4
    assert _names(_gallery(client, studio, person="alice", model="gpt-4o", kind="map")) == ["stops.html"]
    page = _gallery(client, studio)
    assert '<option value="bob">bob</option>' in page
    assert '<option value="gpt-4o">gpt-4o</option>' in page


def test_a_choice_that_is_not_one_is_said_and_left_out(studio: Team, client: Client) -> None:
    html = _gallery(signed_in(client, studio.member), studio, person="nobody", kind="image", q="x" * 300)
    assert html.count("Not one of the choices: left out.") == 1
    assert "at most 200 characters" in html
    assert _names(html) == ["fair-poster.png"]  # the kind still applies


def test_most_viewed_first_counts_views_by_others_and_pages_by_views(
    studio: Team, client: Client, settings: Any
) -> None:
    settings.GALLERY_PAGE_SIZE = 2
    poster = Creation.objects.get(title="Poster")
    lullaby = Creation.objects.get(title="Lullaby")
    member = signed_in(client, studio.member)
    for _ in range(3):
        member.get(reverse("creation_detail", args=[poster.pk]))
    owner = signed_in(Client(), studio.owner)
    owner.get(reverse("artifact_detail", args=[lullaby.runs.get().artifacts.get().pk]))
    owner.get(reverse("creation_detail", args=[poster.pk]))  # its author's own view: not counted
    member.get(reverse("creation_detail", args=[lullaby.pk]))  # likewise
    assert Creation.objects.get(pk=poster.pk).view_count == 3
    assert Creation.objects.get(pk=lullaby.pk).view_count == 1

    url = reverse("workspace_gallery", args=[studio.workspace.slug])
    first = member.get(url, {"sort": "views"})
    second = member.get(url + first.context["next_page_url"])
    assert first.context["next_page_url"].startswith("?sort=views&older=3-")
    assert sorted(_names(first.content.decode())) == ["fair-poster.png", "notes.md"]
    assert _names(second.content.decode()) == ["evening.wav", "tokyo.html"]
    assert second.context["next_page_url"] is None
    assert "Less viewed →" in first.content.decode()


def test_one_tile_per_creation_shows_its_cover_and_how_many_files_it_has(team: Team, client: Client) -> None:
    run = _made(team, "Fair kit", "Everything for the fair", ["a-notes.md", "b-poster.png", "c-map.html"])
    ArtifactFactory.create_batch(9, run=run, kind="markdown")
    _made(team, "Tune", "A tune", ["tune.wav"])
    client = signed_in(client, team.member)
    html = _gallery(client, team, show="creations")
    assert _names(html) == ["Tune", "Fair kit"]
    assert re.findall(r'data-role="file-count">([^<]+)<', html) == ["1 file", "12 files"]
    assert f'href="/creations/{run.creation_id}/?run={run.pk}"' in html
    assert re.findall(r'visually-hidden">: ([^<]+)<', html) == ["tune.wav", "b-poster.png"]  # the covers
    assert "a-notes.md" not in html
    maps = _gallery(client, team, show="creations", kind="map")
    assert _names(maps) == ["Fair kit"]
    assert "c-map.html" in maps  # the cover is a file of the kind asked for
    assert _names(_gallery(client, team, show="creations", q="c-map")) == ["Fair kit"]


def test_one_tile_per_creation_pages_through_every_creation_once(team: Team, client: Client, settings: Any) -> None:
    settings.GALLERY_PAGE_SIZE = 2
    for n in range(5):
        _made(team, f"Creation {n}", "Things", [f"c{n}-one.png", f"c{n}-two.png"])
    client = signed_in(client, team.member)
    url, seen = reverse("workspace_gallery", args=[team.workspace.slug]), []
    next_url: str | None = f"{url}?show=creations"
    while next_url is not None:
        response = client.get(next_url)
        seen += _names(response.content.decode())
        older = response.context["next_page_url"]
        next_url = f"{url}{older}" if older else None
    assert seen == [f"Creation {n}" for n in reversed(range(5))]


def test_the_public_gallery_searches_and_filters_public_creations(team: Team, client: Client) -> None:
    _made(team, "Public map", "A map", ["open.html"], visibility=Visibility.PUBLIC)
    _made(team, "Internal map", "A map", ["internal.html"])
    html = client.get(reverse("public_gallery"), {"q": "map", "person": "alice", "show": "creations"}).content.decode()
    assert _names(html) == ["Public map"]
    assert '<option value="alice" selected>alice</option>' in html
    assert '<option value="bob">' not in html  # only the authors of public creations are offered


# What a searched, filtered page costs, pinned: the same at any size of the gallery.
PINNED_SEARCH_QUERY_COUNTS = {"workspace gallery": 8, "public gallery": 7}  # with the bell's unread count
SEARCHES = [
    {"q": "poster", "kind": "image", "person": "alice", "model": gallery.DEMO_MODEL, "sort": "views"},
    {"q": "poster", "show": "creations", "sort": "views", "person": "alice"},
    {"q": "fair", "show": "creations", "kind": "image"},
]


@pytest.mark.parametrize("params", SEARCHES)
def test_a_search_costs_the_same_queries_at_any_size(team: Team, client: Client, settings: Any, params: dict) -> None:
    settings.GALLERY_PAGE_SIZE = 3

    def counts() -> dict[str, int]:
        found = {}
        for name, url in (
            ("workspace gallery", reverse("workspace_gallery", args=[team.workspace.slug])),
            ("public gallery", reverse("public_gallery")),
        ):
            with CaptureQueriesContext(connection) as queries:
                response = client.get(url, params)
            assert response.status_code == 200
            found[name] = len(queries.captured_queries)
            assert response.context["items"], name
        return found

    client = signed_in(client, team.member)
    _made(team, "Poster", "A summer fair poster", ["poster.png"], visibility=Visibility.PUBLIC)
    client.get(reverse("workspace_gallery", args=[team.workspace.slug]))  # warm what a running server has warm
    small = counts()
    for n in range(6):
        _made(team, f"Poster {n}", "For the fair", [f"poster-{n}.png", "notes.md"], visibility=Visibility.PUBLIC)
    assert counts() == small == PINNED_SEARCH_QUERY_COUNTS
