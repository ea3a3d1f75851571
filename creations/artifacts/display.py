"""What a page needs to show an artifact: its signed URLs and, for documents, safe HTML."""

import base64
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import quote, urlencode

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.utils.safestring import SafeString

from creations.artifacts.origin import derived_sign, grant_sign
from creations.artifacts.renderers import link_run_files, plain_text_document
from creations.models import Artifact, ArtifactKind, ArtifactPage

FRAMED_KINDS = {ArtifactKind.HTML, ArtifactKind.MAP}
DOCUMENT_KINDS = {ArtifactKind.MARKDOWN, ArtifactKind.TEXT}
# Kinds whose `alt_text` is a transcript or description to read beside the player, not a picture's alt.
HEARD_KINDS = {ArtifactKind.AUDIO, ArtifactKind.MIDI}


@dataclass(frozen=True)
class PageDisplay:
    """One page of a PDF drawn as a picture, on the artifact origin."""

    number: int
    url: str
    width: int
    height: int


@dataclass
class ArtifactDisplay:
    artifact: Artifact
    url: str  # inline, on the artifact origin
    download_url: str
    preview_url: str | None
    rendition_url: str | None
    rendered: SafeString | None = None
    too_large_to_render: bool = False
    pages: list[PageDisplay] = field(default_factory=list)  # a PDF's, when shown in full

    @property
    def kind(self) -> str:
        return self.artifact.kind

    @property
    def framed(self) -> bool:
        return self.artifact.kind in FRAMED_KINDS

    @property
    def wide(self) -> bool:
        """Across the grid: pages, and a PDF read page by page."""
        return self.framed or bool(self.pages)

    @property
    def alt(self) -> str:
        """A short text alternative, never empty: the agent's for a picture, else the creation's
        title with the file's name."""
        if self.artifact.alt_text and self.artifact.kind not in HEARD_KINDS:
            return self.artifact.alt_text
        return f"{self.artifact.run.creation}: {self.artifact.name}"

    @property
    def transcript(self) -> str:
        """What the agent said an audio file says or holds, to read beside the player."""
        return self.artifact.alt_text if self.artifact.kind in HEARD_KINDS else ""

    @property
    def captions_url(self) -> str | None:
        """A video's captions as a data: URL: a <track> from another origin would need CORS on the
        artifact origin, and these few checked kilobytes go with the page instead."""
        if not self.artifact.captions_vtt or self.artifact.kind != ArtifactKind.VIDEO:
            return None
        return "data:text/vtt;base64," + base64.b64encode(self.artifact.captions_vtt.encode()).decode("ascii")

    @property
    def pages_cut(self) -> bool:
        """More pages may follow the ones drawn: the document is a download away."""
        return len(self.pages) >= settings.PREVIEW_PDF_PAGES


class ArtifactLinks(Protocol):
    """Where a page points for an artifact's files: `path` another file of its run (a document's
    link), `variant` its preview or rendition, `download` an attachment."""

    def url(
        self, artifact: Artifact, *, path: str | None = None, variant: str = "file", download: bool = False
    ) -> str: ...


class _RunLinks:
    """Signed URLs for the files of one run, one token per (run, viewer) per page."""

    def __init__(self, user: User | AnonymousUser) -> None:
        self.user = user
        self.tokens: dict[int, str] = {}

    def url(self, artifact: Artifact, *, path: str | None = None, variant: str = "file", download: bool = False) -> str:
        token = self.tokens.get(artifact.run_id)
        if token is None:
            token = self.tokens[artifact.run_id] = grant_sign(run_id=artifact.run_id, user=self.user)
        query = {**({"v": variant} if variant != "file" else {}), **({"dl": "1"} if download else {})}
        suffix = f"?{urlencode(query)}" if query else ""
        return f"{settings.ARTIFACT_ORIGIN}/r/{token}/{quote(path or artifact.path)}{suffix}"


def _render_document(artifact: Artifact, links: ArtifactLinks) -> tuple[SafeString | None, bool]:
    """The document's stored rendering with signed links, or its text escaped when it has none."""
    limit = settings.ARTIFACT_INLINE_RENDER_MAX_BYTES
    if artifact.size > limit:
        return None, True
    try:
        if artifact.rendered:
            with artifact.rendered.open("rb") as handle:
                stored = handle.read(settings.PREVIEW_OUTPUT_MAX_BYTES).decode("utf-8", errors="replace")
            return link_run_files(stored, url_for=lambda path: links.url(artifact, path=path)), False
        with artifact.file.open("rb") as handle:
            return plain_text_document(handle.read(limit)), False
    except OSError:
        return None, False


def artifact_displays(
    artifacts: Iterable[Artifact], *, user: User | AnonymousUser, render_documents: bool = False
) -> list[ArtifactDisplay]:
    return artifact_displays_linked(artifacts, links=_RunLinks(user), render_documents=render_documents)


def artifact_displays_linked(
    artifacts: Iterable[Artifact], *, links: ArtifactLinks, render_documents: bool = False
) -> list[ArtifactDisplay]:
    """As `artifact_displays`, with URLs from `links` (a share link's, say) instead of the viewer's signed ones.
    `render_documents`: shown in full, documents rendered and a PDF's pages listed (one query for them all)."""
    artifacts = list(artifacts)
    pages = _pdf_pages(artifacts) if render_documents else {}
    displays = []
    for artifact in artifacts:
        display = ArtifactDisplay(
            artifact=artifact,
            url=links.url(artifact),
            download_url=links.url(artifact, download=True),
            preview_url=links.url(artifact, variant="preview") if artifact.preview else None,
            rendition_url=links.url(artifact, variant="rendition") if artifact.rendition else None,
        )
        if render_documents and artifact.kind in DOCUMENT_KINDS:
            display.rendered, display.too_large_to_render = _render_document(artifact, links)
        display.pages = [
            PageDisplay(
                number=page.number,
                url=links.url(artifact, variant=f"page-{page.number}"),
                width=page.width,
                height=page.height,
            )
            for page in pages.get(artifact.pk, [])
        ]
        displays.append(display)
    return displays


def _pdf_pages(artifacts: list[Artifact]) -> dict[int, list[ArtifactPage]]:
    pdfs = [artifact.pk for artifact in artifacts if artifact.kind == ArtifactKind.PDF]
    by_artifact: dict[int, list[ArtifactPage]] = defaultdict(list)
    if pdfs:
        for page in ArtifactPage.objects.filter(artifact__in=pdfs).order_by("artifact", "number"):
            by_artifact[page.artifact_id].append(page)
    return by_artifact


def derived_url(*, run_id: int, user: User | AnonymousUser, name: str) -> str:
    """The artifact origin's link to a picture made from the run's files (a comparison's overlay)."""
    return f"{settings.ARTIFACT_ORIGIN}/d/{derived_sign(run_id=run_id, user=user, name=name)}/overlay.png"
