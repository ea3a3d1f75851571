"""What a visitor with a share link gets, on the artifact origin (no account, no cookie): the
shared version's page, one artifact's embed, the files under the link, and oEmbed answers.

These pages are the platform's own HTML, never an agent's: they run no script at all (their
CSP allows none) and show the files as the creation page does, HTML and maps in CSP-sandboxed
frames with no network. The share page may not be framed; an embed may be, by any site.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve
from django.views.decorators.http import require_safe

from creations.artifacts.presigned import store_source
from creations.artifacts.serving import artifact_field, artifact_file_response, is_variant
from creations.sharing.embeds import embed_for, oembed_document, principal_artifact, shared_displays
from creations.sharing.services import share_link_note_view
from creations.sharing.tokens import oembed_url, share_page_url
from creations.sharing.visits import SharedVersion, ShareLinkGone, shared_version

ANY_SITE = "*"
NOBODY = "'none'"
ORIGIN_URLCONF = "creations.sharing.origin_urls"


def page_csp(*, frame_ancestors: str) -> str:
    """No script; styles, pictures, media and frames from the artifact origin (and the S3 store's
    redirected media) only."""
    origin = settings.ARTIFACT_ORIGIN
    static = urlsplit(settings.STATIC_URL)
    styles = f"{origin} {static.scheme}://{static.netloc}" if static.netloc else origin
    store = store_source()
    media = f"{origin} {store}" if store else origin
    return "; ".join(
        [
            "default-src 'none'",
            f"style-src {styles} 'unsafe-inline'",
            f"img-src {media} data:",
            f"media-src {media} data:",  # a video's captions, carried by the page
            f"frame-src {origin}",
            "base-uri 'none'",
            "form-action 'none'",
            f"frame-ancestors {frame_ancestors}",
        ]
    )


def _page(template: str, context: dict[str, Any], *, status: int = 200, embeddable: bool = False) -> HttpResponse:
    # Rendered without the request: no context processor runs, so nothing reads a session or makes a CSRF token.
    body = render_to_string(template, {"site_url": settings.SITE_URL.rstrip("/") + "/", **context})
    response = HttpResponse(body, status=status)
    response["Content-Security-Policy"] = page_csp(frame_ancestors=ANY_SITE if embeddable else NOBODY)
    response["Cache-Control"] = "no-store"  # a revoked link must not live on in a cache
    response["X-Robots-Tag"] = "noindex, nofollow"
    if embeddable:
        response.xframe_options_exempt = True
    return response


def _gone(problem: str, *, embeddable: bool = False) -> HttpResponse:
    return _page("sharing/gone.html", {"problem": problem}, status=410, embeddable=embeddable)


@require_safe
def share_page(request: HttpRequest, token: str) -> HttpResponse:
    try:
        shared = shared_version(token)
    except ShareLinkGone as gone:
        return _gone(str(gone))
    if request.method == "GET":
        share_link_note_view(shared.link)
    url = share_page_url(token)
    context = {
        "shared": shared,
        "run": shared.run,
        "artifacts": shared_displays(shared, shared.artifacts()),
        "share_url": url,
        "oembed_url": oembed_url(url),
    }
    return _page("sharing/share_page.html", context)


@require_safe
def share_embed(request: HttpRequest, token: str, artifact_id: int) -> HttpResponse:
    try:
        shared = shared_version(token)
    except ShareLinkGone as gone:
        return _gone(str(gone), embeddable=True)
    artifact = shared.artifact(pk=artifact_id)
    if request.method == "GET":
        share_link_note_view(shared.link)
    (display,) = shared_displays(shared, [artifact])
    context = {
        "shared": shared,
        "display": display,
        "share_url": share_page_url(token),
        "oembed_url": oembed_url(embed_for(shared, artifact).url),
    }
    return _page("sharing/embed.html", context, embeddable=True)


def _shared_file(token: str, path: str, variant: str) -> tuple[SharedVersion, Any, Any]:
    shared = shared_version(token)
    if not is_variant(variant):
        raise Http404("No such file.")
    artifact = shared.artifact(path=path)
    return shared, artifact, artifact_field(artifact, variant)


@require_safe
async def share_file(request: HttpRequest, token: str, path: str) -> HttpResponseBase:
    """A file of the shared version, with the headers it gets everywhere (creations.artifacts.serving);
    its pages may be framed by any site, since an embed frames them."""
    variant = request.GET.get("v", "file")
    try:
        _, artifact, field = await sync_to_async(_shared_file)(token, path, variant)
    except ShareLinkGone as gone:
        return _gone(str(gone), embeddable=True)
    response = await artifact_file_response(
        request, artifact, field, variant=variant, cache_control="no-cache", frame_ancestors=ANY_SITE
    )
    response.xframe_options_exempt = True  # type: ignore[attr-defined]
    return response


class OEmbedRefusal(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _bound(request: HttpRequest, name: str) -> int | None:
    text = request.GET.get(name, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise OEmbedRefusal(400, f"{name} must be a whole number of pixels, 1 or more.")
    return int(text)


def _shared_target(url: str) -> tuple[SharedVersion, int | None]:
    """The share link (and artifact, for an embed's URL) that `url` names."""
    parts = urlsplit(url.strip())
    origin = urlsplit(settings.ARTIFACT_ORIGIN)
    if (parts.scheme, parts.netloc) != (origin.scheme, origin.netloc):
        raise OEmbedRefusal(404, f"Only this Atelier's share links ({settings.ARTIFACT_ORIGIN}/s/…) are embedded here.")
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    try:
        match = resolve(path, urlconf=ORIGIN_URLCONF)
    except Resolver404:
        match = None
    if match is None or match.url_name not in ("share_page", "share_embed"):
        raise OEmbedRefusal(404, "This is not the address of a share link or of one of its embeds.")
    try:
        shared = shared_version(match.kwargs["token"])
    except Http404 as missing:
        raise OEmbedRefusal(404, str(missing)) from None
    except ShareLinkGone as gone:
        raise OEmbedRefusal(410, str(gone)) from None
    return shared, match.kwargs.get("artifact_id")


def _oembed(request: HttpRequest) -> dict[str, Any]:
    if request.GET.get("format", "json") != "json":
        raise OEmbedRefusal(501, "Only format=json is offered.")
    url = request.GET.get("url", "")
    if not url.strip():
        raise OEmbedRefusal(400, "Say which share link to embed: ?url=<the link>.")
    max_width, max_height = _bound(request, "maxwidth"), _bound(request, "maxheight")
    shared, artifact_id = _shared_target(url)
    if artifact_id is not None:
        try:
            artifact = shared.artifact(pk=artifact_id)
        except Http404 as missing:
            raise OEmbedRefusal(404, str(missing)) from None
    else:
        principal = principal_artifact(shared.artifacts())
        if principal is None:
            raise OEmbedRefusal(404, "This link shows no file that can be embedded yet.")
        artifact = principal
    return oembed_document(shared, embed_for(shared, artifact, max_width=max_width, max_height=max_height))


@require_safe
def share_oembed(request: HttpRequest) -> JsonResponse:
    """https://oembed.com's endpoint for share links and their embeds: JSON only (501 otherwise),
    404 for a URL that is not one, 410 for a link that no longer works."""
    try:
        document, status = _oembed(request), 200
    except OEmbedRefusal as refusal:
        document, status = {"error": str(refusal)}, refusal.status
    response = JsonResponse(document, status=status, json_dumps_params={"ensure_ascii": False})
    response["Access-Control-Allow-Origin"] = "*"  # consumers read it from their own pages' scripts too
    response["Cache-Control"] = "no-cache"
    response["X-Robots-Tag"] = "noindex"
    return response
