"""Showing a shared version elsewhere: the files' URLs under the link, the iframe snippet for one
artifact, and its oEmbed answer (https://oembed.com: type `rich`, the snippet as `html`).

An embed is a page of the artifact origin (creations/sharing/origin_views.py): the artifact under
the same rules as everywhere (HTML and maps in a CSP sandbox with no network), and a "Made with
Atelier" link back. The snippet sandboxes the frame as well, so the embedding site is safe from it
whatever it holds: scripts run (a map needs them), popups open (the links back), nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.html import format_html

from creations.artifacts.display import ArtifactDisplay, artifact_displays_linked
from creations.models import Artifact, ArtifactKind
from creations.sharing.tokens import share_embed_url, share_file_url
from creations.sharing.visits import SharedVersion

PROVIDER_NAME = "Atelier"
SNIPPET_SANDBOX = "allow-scripts allow-popups allow-popups-to-escape-sandbox"
# Each kind's natural frame, "Made with Atelier" bar included, before a consumer's maxwidth/maxheight.
FRAME_SIZES = {
    ArtifactKind.HTML: (800, 600),
    ArtifactKind.MAP: (800, 600),
    ArtifactKind.VIDEO: (640, 420),
    ArtifactKind.AUDIO: (640, 200),
    ArtifactKind.MIDI: (640, 220),
}
DEFAULT_FRAME = (640, 480)
SMALLEST_FRAME = (120, 80)
# Which file of a version stands for it when the share page itself is embedded: pages and maps,
# then pictures, films, documents, sound, text, anything.
PRINCIPAL_ORDER = [
    ArtifactKind.HTML,
    ArtifactKind.MAP,
    ArtifactKind.IMAGE,
    ArtifactKind.SVG,
    ArtifactKind.VIDEO,
    ArtifactKind.PDF,
    ArtifactKind.AUDIO,
    ArtifactKind.MIDI,
    ArtifactKind.MARKDOWN,
    ArtifactKind.TEXT,
]


class ShareLinks:
    """The files of a shared version at the link's own addresses (creations.artifacts.display.ArtifactLinks)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def url(self, artifact: Artifact, *, path: str | None = None, variant: str = "file", download: bool = False) -> str:
        return share_file_url(self.token, path or artifact.path, variant=variant, download=download)


def shared_displays(shared: SharedVersion, artifacts: list[Artifact]) -> list[ArtifactDisplay]:
    return artifact_displays_linked(artifacts, links=ShareLinks(shared.token), render_documents=True)


def principal_artifact(artifacts: list[Artifact]) -> Artifact | None:
    ranked = [a for a in artifacts if a.kind in PRINCIPAL_ORDER]
    return min(ranked, key=lambda a: (PRINCIPAL_ORDER.index(ArtifactKind(a.kind)), a.path)) if ranked else None


def frame_size(artifact: Artifact, *, max_width: int | None = None, max_height: int | None = None) -> tuple[int, int]:
    """The frame for `artifact`, scaled down (never up) to fit the consumer's bounds, its shape kept."""
    width, height = FRAME_SIZES.get(ArtifactKind(artifact.kind), DEFAULT_FRAME)
    scale = min(1.0, (max_width or width) / width, (max_height or height) / height)
    return max(SMALLEST_FRAME[0], int(width * scale)), max(SMALLEST_FRAME[1], int(height * scale))


def iframe_snippet(*, token: str, artifact: Artifact, title: str, width: int, height: int) -> str:
    return str(
        format_html(
            '<iframe src="{}" width="{}" height="{}" title="{}" sandbox="{}" loading="lazy" '
            'referrerpolicy="no-referrer" style="border:0;max-width:100%"></iframe>',
            share_embed_url(token, artifact.pk),
            width,
            height,
            f"{title}: {artifact.name}",
            SNIPPET_SANDBOX,
        )
    )


@dataclass(frozen=True)
class Embed:
    artifact: Artifact
    url: str
    snippet: str
    width: int
    height: int


def embed_for(
    shared: SharedVersion, artifact: Artifact, *, max_width: int | None = None, max_height: int | None = None
) -> Embed:
    width, height = frame_size(artifact, max_width=max_width, max_height=max_height)
    return Embed(
        artifact=artifact,
        url=share_embed_url(shared.token, artifact.pk),
        snippet=iframe_snippet(token=shared.token, artifact=artifact, title=shared.title, width=width, height=height),
        width=width,
        height=height,
    )


def oembed_document(shared: SharedVersion, embed: Embed) -> dict[str, Any]:
    """oEmbed 1.0's answer for one shared artifact: a `rich` type whose `html` is the snippet."""
    return {
        "version": "1.0",
        "type": "rich",
        "title": f"{shared.title}: {embed.artifact.name}",
        "provider_name": PROVIDER_NAME,
        "provider_url": settings.SITE_URL.rstrip("/") + "/",
        "html": embed.snippet,
        "width": embed.width,
        "height": embed.height,
        # Consumers may keep it this long; a revoked link stops answering at once all the same.
        "cache_age": 300,
    }
