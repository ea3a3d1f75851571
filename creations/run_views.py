"""Views for a running trajectory: cancel, and the full text behind a capped event."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_POST

from creations.models import Run, RunEvent
from creations.permissions import creation_viewable_or_404
from creations.services import run_cancel


@login_required
@require_POST
def run_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(Run.objects.select_related("creation__workspace"), pk=pk)
    creation_viewable_or_404(creation=run.creation, user=request.user)
    try:
        cancelling = run_cancel(run=run, user=request.user)
    except PermissionDenied:
        message = "Only owners, admins and members of this workspace can cancel runs."
        if _wants_json(request):
            return JsonResponse({"error": message}, status=403)
        return HttpResponse(message, status=403, content_type="text/plain; charset=utf-8")
    if _wants_json(request):
        run.refresh_from_db(fields=["status"])
        return JsonResponse({"cancelling": cancelling, "status": run.status}, status=202 if cancelling else 409)
    return redirect(run)


@require_GET
def run_event_overflow(request: HttpRequest, pk: int, seq: int, field: str) -> FileResponse:
    """The whole text of an event field that was too long to store inline, as plain text."""
    run = get_object_or_404(Run.objects.select_related("creation"), pk=pk)
    creation_viewable_or_404(creation=run.creation, user=request.user)
    event = get_object_or_404(RunEvent, run=run, seq=seq)
    overflow = (event.payload or {}).get("overflow") or {}
    entry = overflow.get(field) if isinstance(overflow, dict) else None
    name = entry.get("path") if isinstance(entry, dict) else None
    if not isinstance(name, str) or not name.startswith(f"run-events/{run.pk}/") or not default_storage.exists(name):
        raise Http404("No such output.")
    response = FileResponse(default_storage.open(name, "rb"), content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "") and not request.headers.get("HX-Request")
