"""Serving artifact files on the artifact origin (see creations.artifacts.origin).

No session exists here: the signed token in the URL names the run and the viewer,
and the viewer's right to see the creation is checked again on every request, so
a token stops working as soon as its holder loses access (or when it expires).
"""

from asgiref.sync import sync_to_async
from django.contrib.auth.models import AnonymousUser, User
from django.db.models.fields.files import FieldFile
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_safe

from creations.access import can_view_creation
from creations.artifacts.headers import content_disposition, serving_rule
from creations.artifacts.http_range import ByteRange, RangeNotSatisfiable, parse_range
from creations.artifacts.origin import grant_unsign
from creations.artifacts.streaming import file_chunks, open_byte_range
from creations.models import Artifact

VARIANTS = ("file", "preview", "rendition")


def _authorized_artifact(token: str, path: str, variant: str) -> tuple[Artifact, FieldFile]:
    grant = grant_unsign(token)
    if grant is None or variant not in VARIANTS:
        raise Http404("This artifact link is invalid or has expired; reload the page it came from.")
    artifact = Artifact.objects.select_related("run__creation").filter(run_id=grant.run_id, path=path).first()
    if artifact is None:
        raise Http404("No such artifact.")
    viewer: User | AnonymousUser = AnonymousUser()
    if grant.user_id:
        viewer = User.objects.filter(pk=grant.user_id, is_active=True).first() or AnonymousUser()
    if not can_view_creation(creation=artifact.run.creation, user=viewer):
        raise Http404("No such artifact.")
    field: FieldFile | None = {"file": artifact.file, "preview": artifact.preview, "rendition": artifact.rendition}[
        variant
    ]
    if not field:
        raise Http404("This artifact has no such variant.")
    return artifact, field


@require_safe
async def artifact_serve(request: HttpRequest, token: str, path: str) -> HttpResponseBase:
    variant = request.GET.get("v", "file")
    artifact, field = await sync_to_async(_authorized_artifact)(token, path, variant)
    rule = serving_rule(artifact, variant=variant, download=request.GET.get("dl") == "1")
    size: int = await sync_to_async(lambda: field.size)()
    headers = {
        "Content-Type": rule.content_type,
        "Content-Disposition": content_disposition(artifact.name, attachment=rule.attachment),
        "Accept-Ranges": "bytes",
        "Cache-Control": "private, max-age=300",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Resource-Policy": "cross-origin",
    }
    if rule.csp:
        headers["Content-Security-Policy"] = rule.csp
    try:
        byte_range = parse_range(request.headers.get("Range"), size)
    except RangeNotSatisfiable:
        return HttpResponse(status=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    status = 206 if byte_range else 200
    if byte_range is None:
        byte_range = ByteRange(start=0, end=size - 1)
    else:
        headers["Content-Range"] = f"bytes {byte_range.start}-{byte_range.end}/{size}"
    headers["Content-Length"] = str(max(byte_range.length, 0))
    if request.method == "HEAD" or size == 0:
        return HttpResponse(status=status, headers=headers)
    handle, seek_to = await sync_to_async(open_byte_range)(
        field.storage, str(field.name), start=byte_range.start, length=byte_range.length
    )
    return StreamingHttpResponse(
        file_chunks(handle, start=seek_to, length=byte_range.length), status=status, headers=headers
    )
