"""The galleries' reads: what a search, the filters and an order select, one keyset page at a time.

A workspace's gallery (as one member sees it) or the public one. Each tile is one file of the
version a creation shows, or, grouped, one tile per creation: its cover file and how many files
the version has. Pages walk "older than" (or "less viewed than") the last tile shown, so a page
costs the same at the 10,000th artifact as at the first, and no COUNT is made.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib.auth.models import AnonymousUser, User
from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from django.db.models import Case, Count, Exists, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Value, When

from creations.access import visible_to_member
from creations.arena.selectors import model_hidden_creations
from creations.models import Artifact, ArtifactKind, Creation, Run, Visibility
from workspaces.models import ModelEndpoint, Workspace

SORT_NEWEST, SORT_MOST_VIEWED = "newest", "views"
SHOW_FILES, SHOW_CREATIONS = "files", "creations"
# The model filter's value for the built-in demo model, which has no endpoint (so no model name).
DEMO_MODEL = "built-in-demo"
# Stemmed English: "maps" finds "map", "walking" finds "walk".
SEARCH_CONFIG = "english"
# The public gallery's person filter lists at most this many authors (alphabetically).
PEOPLE_LISTED = 200


@dataclass(frozen=True)
class GalleryQuery:
    text: str = ""  # in the creation's title or brief (full-text on PostgreSQL), or a file's name
    kind: str = ""
    person: str = ""  # the author's username
    model: str = ""  # a model name, or DEMO_MODEL
    sort: str = SORT_NEWEST
    show: str = SHOW_FILES

    @property
    def grouped(self) -> bool:
        return self.show == SHOW_CREATIONS


@dataclass(frozen=True)
class GalleryPage:
    items: Sequence[Artifact]  # grouped: each creation's cover file, with `file_count`
    older: str | None  # the cursor of the next page, None on the last one


_NEWEST_CURSOR = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")
_VIEWS_CURSOR = re.compile(r"[0-9]{1,20}-[0-9]{1,20}-[0-9]{1,20}")

# A grouped tile's cover: a picture if the version has one, else a file with a preview, else its first file.
_COVER_RANK = Case(
    When(kind__in=(ArtifactKind.IMAGE, ArtifactKind.SVG), then=Value(0)),
    When(Q(preview__isnull=False) & ~Q(preview=""), then=Value(1)),
    default=Value(2),
    output_field=IntegerField(),
)


def _micros(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def _cursor(artifact: Artifact, sort: str) -> str:
    position = f"{_micros(artifact.created_at)}-{artifact.pk}"
    return f"{artifact.run.creation.view_count}-{position}" if sort == SORT_MOST_VIEWED else position


def _moment(micros: str) -> datetime:
    return datetime.fromtimestamp(int(micros) / 1_000_000, tz=UTC)


def _after_cursor(artifacts: QuerySet[Artifact], text: str, sort: str) -> QuerySet[Artifact]:
    """The tiles after the one a cursor names; all of them for anything that is not a cursor of
    this order (the gallery then starts at its top)."""
    text = text or ""
    try:
        if sort == SORT_MOST_VIEWED and _VIEWS_CURSOR.fullmatch(text):
            views, micros, pk = text.split("-")
            at, views_now = _moment(micros), Q(run__creation__view_count=int(views))
            return artifacts.filter(
                Q(run__creation__view_count__lt=int(views))
                | (views_now & Q(created_at__lt=at))
                | (views_now & Q(created_at=at, pk__lt=int(pk)))
            )
        if sort == SORT_NEWEST and _NEWEST_CURSOR.fullmatch(text):
            micros, pk = text.split("-")
            at = _moment(micros)
            return artifacts.filter(Q(created_at__lt=at) | Q(created_at=at, pk__lt=int(pk)))
    except (OverflowError, OSError, ValueError):
        pass
    return artifacts


def _matching(artifacts: QuerySet[Artifact], query: GalleryQuery) -> QuerySet[Artifact]:
    """Tiles whose creation's title or brief has the words, or whose file name (grouped: any file
    of the version) contains the text. PostgreSQL reads the words as a web search ("a -b", quoted
    phrases); SQLite, the embedded default, looks for the text as typed."""
    text = query.text
    if query.grouped:
        names: Q | Exists = Exists(Artifact.objects.filter(run_id=OuterRef("run_id"), path__icontains=text))
    else:
        names = Q(path__icontains=text)
    if connection.vendor == "postgresql":
        artifacts = artifacts.annotate(
            words=SearchVector("run__creation__title", "run__creation__brief", config=SEARCH_CONFIG)
        )
        about = Q(words=SearchQuery(text, search_type="websearch", config=SEARCH_CONFIG))
    else:
        about = Q(run__creation__title__icontains=text) | Q(run__creation__brief__icontains=text)
    return artifacts.filter(about | names)


def _one_tile_per_creation(artifacts: QuerySet[Artifact], kind: str) -> QuerySet[Artifact]:
    """Each version's cover file only (of the kind asked for, if any), with how many files it has."""
    covers = Artifact.objects.filter(run_id=OuterRef("run_id"))
    if kind:
        covers = covers.filter(kind=kind)
    cover = covers.annotate(rank=_COVER_RANK).order_by("rank", "path").values("pk")[:1]
    files = Artifact.objects.filter(run_id=OuterRef("run_id")).order_by().values("run_id").annotate(n=Count("pk"))
    return artifacts.filter(pk=Subquery(cover)).annotate(file_count=Subquery(files.values("n")))


def gallery_page(
    *,
    user: User | AnonymousUser,
    workspace: Workspace | None = None,
    query: GalleryQuery | None = None,
    older_than: str = "",
    size: int,
) -> GalleryPage:
    """One page of a gallery, as `query` selects and orders it."""
    query = query or GalleryQuery()
    versions = Run.objects.filter(creation_id=OuterRef("run__creation_id")).values("creation_id")
    artifacts: QuerySet[Artifact] = (
        Artifact.objects.select_related("run__creation__workspace", "run__creation__author", "run__started_by")
        # A creation shows once: the files of the version it shows (its latest success, or one restored).
        .filter(Q(run__creation__shown_run__isnull=True) | Q(run__creation__shown_run=F("run")))
        .annotate(version_count=Subquery(versions.annotate(count=Count("pk")).values("count")[:1]))
    )
    if workspace is None:
        artifacts = artifacts.filter(run__creation__visibility=Visibility.PUBLIC)
    else:
        artifacts = artifacts.filter(workspace=workspace).filter(visible_to_member(user, creation="run__creation__"))
    if query.grouped:
        artifacts = _one_tile_per_creation(artifacts, query.kind)
    elif query.kind:
        artifacts = artifacts.filter(kind=query.kind)
    if query.person:
        artifacts = artifacts.filter(run__creation__author__username=query.person)
    if query.model == DEMO_MODEL:
        artifacts = artifacts.filter(run__creation__model_endpoint__isnull=True)
    elif query.model:
        artifacts = artifacts.filter(run__creation__model_endpoint__model=query.model)
    if query.model:
        # Filtering by model would tell a blind contestant's model: those hidden from the person are left out.
        artifacts = artifacts.exclude(run__creation__in=model_hidden_creations(user=user))
    if query.text:
        artifacts = _matching(artifacts, query)
    artifacts = _after_cursor(artifacts, older_than, query.sort)
    order: tuple[str, ...] = ("-created_at", "-pk")
    if query.sort == SORT_MOST_VIEWED:
        order = ("-run__creation__view_count", *order)
    items = list(artifacts.order_by(*order)[: size + 1])
    older = _cursor(items[size - 1], query.sort) if len(items) > size else None
    return GalleryPage(items=items[:size], older=older)


def gallery_people(*, workspace: Workspace | None) -> list[str]:
    """Whom the person filter offers: a workspace's members, or the authors of public creations."""
    if workspace is not None:
        members = User.objects.filter(memberships__workspace=workspace)
        return list(members.order_by("username").values_list("username", flat=True))
    authors = Creation.objects.filter(visibility=Visibility.PUBLIC).values_list("author__username", flat=True)
    return list(authors.order_by("author__username").distinct()[:PEOPLE_LISTED])


def gallery_models(*, workspace: Workspace | None) -> list[str]:
    """The model names the model filter offers (the demo model aside): a workspace's endpoints' (retired
    ones too, since their creations stay), or those public creations were made with."""
    if workspace is not None:
        names = ModelEndpoint.objects.filter(workspace=workspace).values_list("model", flat=True)
        return list(names.order_by("model").distinct())
    used = Creation.objects.filter(visibility=Visibility.PUBLIC, model_endpoint__isnull=False)
    return list(used.values_list("model_endpoint__model", flat=True).order_by("model_endpoint__model").distinct())
