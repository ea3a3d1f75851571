"""Downloads from the platform: all artifacts of a run as a zip, the trajectory as JSON.

Both are attachments (never rendered by the browser) built from stored data.
"""

import json
import shutil
import tempfile
import zipfile

from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET

from creations.access import run_for_viewer_or_404
from creations.artifacts.headers import content_disposition
from creations.artifacts.streaming import file_chunks
from creations.events.trajectory import run_events_export


@require_GET
def run_download_zip(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    run = run_for_viewer_or_404(pk=pk, user=request.user).run
    spool = tempfile.TemporaryFile()  # noqa: SIM115  (closed by the streaming body)
    with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for artifact in run.artifacts.all():
            info = zipfile.ZipInfo(artifact.path, date_time=artifact.created_at.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            with artifact.file.open("rb") as source, archive.open(info, "w") as target:
                shutil.copyfileobj(source, target)
    size = spool.tell()
    headers = {
        "Content-Type": "application/zip",
        "Content-Disposition": content_disposition(f"run-{run.pk}-artifacts.zip", attachment=True),
        "Content-Length": str(size),
        "X-Content-Type-Options": "nosniff",
    }
    return StreamingHttpResponse(file_chunks(spool), headers=headers)


@require_GET
def run_trajectory_json(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_viewer_or_404(pk=pk, user=request.user).run
    body = json.dumps(run_events_export(run=run), cls=DjangoJSONEncoder, ensure_ascii=False, indent=2)
    return HttpResponse(
        body,
        content_type="application/json; charset=utf-8",
        headers={"Content-Disposition": content_disposition(f"run-{run.pk}-trajectory.json", attachment=True)},
    )
