"""How each kind of artifact is served: content type, disposition and Content-Security-Policy.

Every byte is treated as hostile. Scriptable formats (HTML, SVG) only ever run
under a CSP `sandbox` (an opaque origin, no cookies, no storage) with no network
(`connect-src 'none'`) and nothing loaded from another host (pages bundle what they
show) but our own S3 store, where media is redirected to (creations.artifacts.presigned),
and the hosts an operator lists in ARTIFACT_PAGE_HOSTS (map tiles, say); formats the browser could misread are
forced to download; the content type never comes from the file name.
"""

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from django.conf import settings

from creations.artifacts.presigned import store_source
from creations.models import Artifact, ArtifactKind

# Types the browser shows without running anything; anything else is downloaded.
INLINE_MEDIA_TYPES = frozenset(
    {
        "image/png",
        "image/jpeg",
        "image/webp",
        "image/gif",
        "video/mp4",
        "video/webm",
        "video/ogg",
        "audio/wav",
        "audio/x-wav",
        "audio/wave",
        "audio/mpeg",
        "audio/ogg",
        "audio/webm",
        "audio/flac",
        "application/pdf",
    }
)
DOWNLOAD_TYPE = "application/octet-stream"
TEXT_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'"
SVG_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")  # as written in a URL
# A CSP host-source (CSP Level 3, section 2.3.1): a scheme, then a host of dotted labels
# (letters, digits, hyphens), then an optional port. It has no form for an IPv6 literal:
# Chromium refuses `http://[::1]:8000` with an error in the console and ignores it.
_CSP_HOST_SOURCE = re.compile(r"[a-z][a-z0-9+.-]*://[a-z0-9-]+(\.[a-z0-9-]+)*(:[0-9]+)?", re.IGNORECASE)


def is_csp_host_source(origin: str) -> bool:
    """Whether a CSP source list can name this origin (so a browser will read it)."""
    return _CSP_HOST_SOURCE.fullmatch(origin) is not None


def platform_origins() -> list[str]:
    """The origins of the platform's pages, which alone may frame an artifact, as a CSP can name them.

    SITE_URL; in development also the other loopback names at its port, since
    the development server answers to each and a newcomer may open any of them
    (but `[::1]`, which no CSP source can name: a page opened there cannot frame artifacts)."""
    site = settings.SITE_URL.rstrip("/")
    parts = urlsplit(site)
    if not settings.DEBUG or parts.hostname not in {name.strip("[]") for name in LOOPBACK_NAMES}:
        origins = [site]
    else:
        port = f":{parts.port}" if parts.port else ""
        origins = [f"{parts.scheme}://{name}{port}" for name in LOOPBACK_NAMES]
    return [origin for origin in origins if is_csp_host_source(origin)]


# What an HTML artifact may load: its own files (the artifact origin) and what it holds
# itself. Never another host: any request out (an image, a map tile) can carry what the
# page read, and the page is written by a model that may have been prompt-injected. (Our own
# S3 store's objects excepted: what a request there carries stays in our store; and the hosts
# an operator chose to trust with that, ARTIFACT_PAGE_HOSTS, for images, styles, fonts and scripts.)
LOCAL_SOURCES = "'self' data: blob:"
# When SITE_URL itself cannot be named in a CSP (an IPv6 literal): framed by nobody, rather than
# an empty source list, which a browser reads as "by anyone".
NO_ANCESTORS = "'none'"


def _with_page_hosts(sources: str) -> str:
    return " ".join([sources, *settings.ARTIFACT_PAGE_HOSTS])


def html_csp(*, frame_ancestors: str | None = None) -> str:
    """HTML and maps: scripts run, but in a sandbox with no network and no navigation out.
    Framed by the platform's pages only, unless `frame_ancestors` says otherwise (a shared
    creation's page may be embedded anywhere: nothing in the sandbox is the viewer's)."""
    # The page's own pictures, sounds and fonts may be redirected to the S3 store (our objects only).
    store = store_source()
    media = f"{LOCAL_SOURCES} {store}" if store else LOCAL_SOURCES
    return "; ".join(
        [
            "sandbox allow-scripts",
            "default-src 'none'",
            f"script-src {_with_page_hosts(LOCAL_SOURCES)} 'unsafe-inline' 'unsafe-eval'",
            f"style-src {_with_page_hosts(LOCAL_SOURCES)} 'unsafe-inline'",
            f"img-src {_with_page_hosts(media)}",
            f"media-src {media}",
            f"font-src {_with_page_hosts(media)}",
            "connect-src 'none'",
            "form-action 'none'",
            "base-uri 'none'",
            "frame-src 'none'",
            "worker-src 'none'",
            f"frame-ancestors {frame_ancestors or ' '.join(platform_origins()) or NO_ANCESTORS}",
        ]
    )


@dataclass(frozen=True)
class ServingRule:
    content_type: str
    attachment: bool
    csp: str | None = None


def _media_rule(content_type: str) -> ServingRule:
    if content_type in INLINE_MEDIA_TYPES:
        return ServingRule(content_type=content_type, attachment=False)
    return ServingRule(content_type=DOWNLOAD_TYPE, attachment=True)


def serving_rule(
    artifact: Artifact, *, variant: str, download: bool, frame_ancestors: str | None = None
) -> ServingRule:
    """The headers for one artifact file ('file'), its preview or its rendition (`frame_ancestors`: html_csp's)."""
    if variant == "preview" or variant.startswith("page-"):  # PNGs the preview sandbox drew
        return ServingRule(content_type="image/png", attachment=download)
    if variant == "rendition":
        rule = _media_rule(artifact.rendition_content_type)
    elif artifact.kind in (ArtifactKind.HTML, ArtifactKind.MAP):
        rule = ServingRule(
            content_type="text/html; charset=utf-8", attachment=False, csp=html_csp(frame_ancestors=frame_ancestors)
        )
    elif artifact.kind == ArtifactKind.SVG:
        rule = ServingRule(content_type="image/svg+xml", attachment=False, csp=SVG_CSP)
    elif artifact.kind in (ArtifactKind.IMAGE, ArtifactKind.VIDEO, ArtifactKind.AUDIO, ArtifactKind.PDF):
        rule = _media_rule(artifact.content_type.split(";")[0].strip().lower())
    elif artifact.kind in (ArtifactKind.MARKDOWN, ArtifactKind.TEXT):
        rule = ServingRule(content_type="text/plain; charset=utf-8", attachment=False, csp=TEXT_CSP)
    else:  # MIDI is offered for download (its rendition plays); OTHER is opaque bytes.
        rule = ServingRule(content_type=DOWNLOAD_TYPE, attachment=True)
    if download and not rule.attachment:
        rule = ServingRule(content_type=rule.content_type, attachment=True, csp=rule.csp)
    return rule


def content_disposition(filename: str, *, attachment: bool) -> str:
    ascii_name = "".join(c if c.isascii() and c.isprintable() and c not in '"\\;' else "_" for c in filename) or "file"
    kind = "attachment" if attachment else "inline"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"
