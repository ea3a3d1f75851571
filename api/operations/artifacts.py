"""What a run made: its artifacts listed, each downloaded (Range supported), its
preview, and all of them as one zip.

These answers come from the platform's own origin, so an artifact is always an
attachment that no browser renders here (and a CSP sandbox besides): agent output
never runs with the platform's cookies (media on S3 may come from the store instead, at
a short-lived URL: an attachment there too). Pages show artifacts from the artifact
origin instead (creations/artifacts/origin.py).
"""

from django.db.models.fields.files import FieldFile
from django.http import Http404, HttpRequest, HttpResponseRedirect, StreamingHttpResponse
from django.http.response import HttpResponseBase
from ninja import Router

from api.auth import caller
from api.schemas.artifacts import ArtifactOut
from creations.access import artifact_for_viewer_or_404, run_for_viewer_or_404
from creations.artifacts.headers import content_disposition, serving_rule
from creations.artifacts.presigned import presigned_url
from creations.artifacts.streaming import chunks_off_thread, ranged_file_response
from creations.artifacts.zip_stream import zip_artifacts
from creations.models import Artifact

router = Router(tags=["artifacts"])
run_router = Router(tags=["artifacts"])


def _binary(media_type: str) -> dict[str, object]:
    return {"content": {media_type: {"schema": {"type": "string", "format": "binary"}}}}


# An artifact's own type, whatever it is: clients should not rely on one.
BINARY = _binary("*/*")


@run_router.get("/{run_id}/artifacts", response=list[ArtifactOut], summary="What a run made")
def list_artifacts(request: HttpRequest, run_id: int) -> list[Artifact]:
    run = run_for_viewer_or_404(pk=run_id, user=caller(request)).run
    return list(run.artifacts.order_by("path"))


@run_router.get(
    "/{run_id}/artifacts/zip",
    summary="All of a run's artifacts as one zip",
    openapi_extra={"responses": {200: {"description": "A zip file", **_binary("application/zip")}}},
)
def download_zip(request: HttpRequest, run_id: int) -> StreamingHttpResponse:
    run = run_for_viewer_or_404(pk=run_id, user=caller(request)).run
    headers = {
        "Content-Type": "application/zip",
        "Content-Disposition": content_disposition(f"run-{run.pk}-artifacts.zip", attachment=True),
        "X-Content-Type-Options": "nosniff",
    }
    return StreamingHttpResponse(chunks_off_thread(zip_artifacts(list(run.artifacts.all()))), headers=headers)


def _file_response(
    request: HttpRequest, artifact: Artifact, field: FieldFile, *, content_type: str, variant: str
) -> HttpResponseBase:
    disposition = content_disposition(artifact.name, attachment=True)
    # Media on S3 is redirected here as on the artifact origin (same rule, same access check
    # first), with the same attachment headers: the big files API clients fetch in bulk then
    # never pass through a web process, and the `atelier` CLI follows redirects (curl needs -L).
    # What the artifact origin serves itself (pages, SVG, text) is streamed from here too.
    if serving_rule(artifact, variant=variant, download=True).csp is None:
        url = presigned_url(field.storage, str(field.name), content_type=content_type, disposition=disposition)
        if url is not None:
            return HttpResponseRedirect(url, headers={"Cache-Control": "no-store"})
    return ranged_file_response(
        storage=field.storage,
        name=str(field.name),
        size=field.size,
        range_header=request.headers.get("Range"),
        method=request.method or "GET",
        headers={
            "Content-Type": content_type,
            "Content-Disposition": disposition,
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'",
            "Cache-Control": "private, max-age=300",
        },
    )


@router.get(
    "/{artifact_id}/download",
    summary="An artifact's bytes",
    description="Always an attachment. Send `Range: bytes=a-b` for a part (206). With S3 storage, media "
    "(images, video, audio, PDF, other binary files) may be answered with a redirect (302) to a short-lived "
    "URL of the store: follow it (curl -L); the Range header applies there too.",
    openapi_extra={
        "responses": {
            200: {"description": "The file", **BINARY},
            206: {"description": "The part asked for", **BINARY},
            302: {"description": "The file, at a short-lived URL of the S3 store (Location)"},
            416: {"description": "The range lies outside the file"},
        }
    },
)
def download_artifact(request: HttpRequest, artifact_id: int) -> HttpResponseBase:
    artifact = artifact_for_viewer_or_404(pk=artifact_id, user=caller(request)).artifact
    return _file_response(
        request,
        artifact,
        artifact.file,
        content_type=artifact.content_type or "application/octet-stream",
        variant="file",
    )


@router.get(
    "/{artifact_id}/preview",
    summary="An artifact's preview image (PNG)",
    openapi_extra={"responses": {200: {"description": "A PNG", **_binary("image/png")}}},
)
def artifact_preview(request: HttpRequest, artifact_id: int) -> HttpResponseBase:
    artifact = artifact_for_viewer_or_404(pk=artifact_id, user=caller(request)).artifact
    if not artifact.preview:
        raise Http404("This artifact has no preview.")
    return _file_response(request, artifact, artifact.preview, content_type="image/png", variant="preview")
