"""Downloads from the platform: all artifacts of a run as a zip, the trajectory as JSON.

Both are attachments (never rendered by the browser), streamed as they are
made: the zip file by file and the JSON a page of events at a time, so a run
with gigabytes of files or a million events costs the web process a few
chunks of memory, not the whole export.
"""

import json
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, StreamingHttpResponse
from django.views.decorators.http import require_GET

from creations.access import run_for_viewer_or_404
from creations.arena.selectors import model_names_hidden_from, reason_shown
from creations.artifacts.headers import content_disposition
from creations.artifacts.streaming import chunks_off_thread
from creations.artifacts.zip_stream import zip_artifacts
from creations.events.trajectory import run_export_event_page, run_export_summary
from creations.models import Artifact, Run


@require_GET
def run_download_zip(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    run = run_for_viewer_or_404(pk=pk, user=request.user).run
    artifacts: list[Artifact] = list(run.artifacts.all())
    headers = {
        "Content-Type": "application/zip",
        "Content-Disposition": content_disposition(f"run-{run.pk}-artifacts.zip", attachment=True),
        "X-Content-Type-Options": "nosniff",
    }
    return StreamingHttpResponse(chunks_off_thread(zip_artifacts(artifacts)), headers=headers)


def _json(value: Any) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False)


async def _trajectory_chunks(run: Run, reason: str, hidden: tuple[str, ...]) -> AsyncIterator[bytes]:
    summary = await sync_to_async(run_export_summary)(run=run)
    summary["run"]["reason"] = reason
    # The summary's fields, then "events" last: an array written a page at a time.
    yield (_json(summary)[:-1] + ', "events": [\n').encode()
    after, first = 0, True
    while page := await sync_to_async(run_export_event_page)(run_id=run.pk, after_seq=after, hidden=hidden):
        yield "".join(("" if first and i == 0 else ",\n") + _json(event) for i, event in enumerate(page)).encode()
        after, first = page[-1]["seq"], False
    yield b"\n]}\n"


@require_GET
def run_trajectory_json(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    run = run_for_viewer_or_404(pk=pk, user=request.user).run
    # A reason or an event naming the model of a blind contestant is told as its pages tell it.
    hidden = model_names_hidden_from(creation=run.creation, user=request.user)
    reason = reason_shown(run=run, model_hidden=bool(hidden))
    return StreamingHttpResponse(
        _trajectory_chunks(run, reason, hidden),
        content_type="application/json; charset=utf-8",
        headers={"Content-Disposition": content_disposition(f"run-{run.pk}-trajectory.json", attachment=True)},
    )
