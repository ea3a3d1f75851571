"""Serving artifact files on the artifact origin (see creations.artifacts.origin).

No session exists here: the signed token in the URL names the run and the viewer,
and the viewer's right to see the creation is checked again on every request, so
a token stops working as soon as its holder loses access (or when it expires).
Media on S3 may then be answered with a redirect to a short-lived URL of the store
(creations.artifacts.presigned); a Range request served here reads only that range.
"""

import re

from asgiref.sync import sync_to_async
from django.contrib.auth.models import AnonymousUser, User
from django.core.files.storage import default_storage
from django.db.models.fields.files import FieldFile
from django.http import Http404, HttpRequest, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_safe

from creations.access import can_view_creation
from creations.artifacts.headers import content_disposition, serving_rule
from creations.artifacts.origin import DerivedGrant, derived_unsign, grant_unsign
from creations.artifacts.presigned import presigned_url
from creations.artifacts.streaming import ranged_file_response
from creations.models import Artifact, ArtifactPage, Run

VARIANTS = ("file", "preview", "rendition")
PAGE_VARIANT = re.compile(r"page-([1-9][0-9]{0,3})")  # a PDF's page drawn as a picture (ArtifactPage)


def is_variant(variant: str) -> bool:
    """One of VARIANTS, or a page: `page-3`."""
    return variant in VARIANTS or PAGE_VARIANT.fullmatch(variant) is not None


def _authorized_artifact(token: str, path: str, variant: str) -> tuple[Artifact, FieldFile]:
    grant = grant_unsign(token)
    if grant is None or not is_variant(variant):
        raise Http404("This artifact link is invalid or has expired; reload the page it came from.")
    artifact = Artifact.objects.select_related("run__creation").filter(run_id=grant.run_id, path=path).first()
    if artifact is None:
        raise Http404("No such artifact.")
    viewer: User | AnonymousUser = AnonymousUser()
    if grant.user_id:
        viewer = User.objects.filter(pk=grant.user_id, is_active=True).first() or AnonymousUser()
    if not can_view_creation(creation=artifact.run.creation, user=viewer):
        raise Http404("No such artifact.")
    return artifact, artifact_field(artifact, variant)


@require_safe
async def artifact_serve(request: HttpRequest, token: str, path: str) -> HttpResponseBase:
    variant = request.GET.get("v", "file")
    artifact, field = await sync_to_async(_authorized_artifact)(token, path, variant)
    return await artifact_file_response(request, artifact, field, variant=variant)


def artifact_field(artifact: Artifact, variant: str) -> FieldFile:
    """The stored file of one of VARIANTS or a page (`is_variant`); Http404 when the artifact has none."""
    if page := PAGE_VARIANT.fullmatch(variant):
        found = ArtifactPage.objects.filter(artifact=artifact, number=int(page.group(1))).first()
        if found is None:
            raise Http404("This artifact has no such page.")
        return found.image
    field: FieldFile | None = {"file": artifact.file, "preview": artifact.preview, "rendition": artifact.rendition}.get(
        variant
    )
    if not field:
        raise Http404("This artifact has no such variant.")
    return field


async def artifact_file_response(
    request: HttpRequest,
    artifact: Artifact,
    field: FieldFile,
    *,
    variant: str,
    cache_control: str = "private, max-age=300",
    frame_ancestors: str | None = None,
) -> HttpResponseBase:
    """One of an artifact's files, after the caller's access check, with the headers its kind
    needs (creations.artifacts.headers): `?dl=1` as an attachment, a Range as its part."""
    rule = serving_rule(
        artifact, variant=variant, download=request.GET.get("dl") == "1", frame_ancestors=frame_ancestors
    )
    disposition = content_disposition(artifact.name, attachment=rule.attachment)
    if rule.csp is None:  # the store can give every header this file needs
        url = await sync_to_async(presigned_url)(
            field.storage, str(field.name), content_type=rule.content_type, disposition=disposition
        )
        if url is not None:
            return HttpResponseRedirect(url, headers={"Cache-Control": "no-store"})
    size: int = await sync_to_async(lambda: field.size)()
    headers = {
        "Content-Type": rule.content_type,
        "Content-Disposition": disposition,
        "Cache-Control": cache_control,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Resource-Policy": "cross-origin",
    }
    if rule.csp:
        headers["Content-Security-Policy"] = rule.csp
    return await sync_to_async(ranged_file_response)(
        storage=field.storage,
        name=str(field.name),
        size=size,
        range_header=request.headers.get("Range"),
        method=request.method or "GET",
        headers=headers,
    )


def _authorized_derived(token: str) -> DerivedGrant:
    grant = derived_unsign(token)
    if grant is None:
        raise Http404("This link is invalid or has expired; reload the page it came from.")
    run = Run.objects.select_related("creation").filter(pk=grant.run_id).first()
    viewer: User | AnonymousUser = AnonymousUser()
    if grant.user_id:
        viewer = User.objects.filter(pk=grant.user_id, is_active=True).first() or AnonymousUser()
    if run is None or not can_view_creation(creation=run.creation, user=viewer):
        raise Http404("No such picture.")
    return grant


@require_safe
async def derived_serve(request: HttpRequest, token: str) -> HttpResponseBase:
    """A PNG the platform made from a run's files in a sandbox (a comparison's overlay): agent pixels, so
    served here like the files themselves, never from the platform's origin."""
    grant = await sync_to_async(_authorized_derived)(token)
    try:
        size: int = await sync_to_async(default_storage.size)(grant.name)
    except (FileNotFoundError, OSError):
        raise Http404("This picture is no longer kept; reload the page it came from.") from None
    headers = {
        "Content-Type": "image/png",
        "Content-Disposition": content_disposition(grant.name.rsplit("/", 1)[-1], attachment=False),
        "Cache-Control": "private, max-age=300",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Resource-Policy": "cross-origin",
        "Content-Security-Policy": "default-src 'none'; sandbox",
    }
    return await sync_to_async(ranged_file_response)(
        storage=default_storage,
        name=grant.name,
        size=size,
        range_header=request.headers.get("Range"),
        method=request.method or "GET",
        headers=headers,
    )
