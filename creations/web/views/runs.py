"""A run's pages: the live run, its artifacts fragment, a message to its agent, cancel,
and the full text behind a capped event."""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from creations.access import can_cancel_run, creation_visible, run_for_viewer_or_404, run_to_cancel_or_404
from creations.arena.selectors import (
    contestant_note,
    model_hidden_from,
    model_names,
    model_names_hidden_from,
    reason_shown,
)
from creations.artifacts.display import artifact_displays
from creations.artifacts.streaming import file_chunks
from creations.events.redaction import TOLD_FIELDS, text_without_names
from creations.events.trajectory import NotKept, live_replay_after, rejected_outputs, run_trajectory
from creations.models import Run, RunEvent
from creations.runs.messages import run_message_send
from creations.runs.services import run_cancel
from creations.web.csp import with_platform_csp
from creations.web.forms import RunMessageForm
from creations.web.selectors import run_artifact_page


@with_platform_csp
@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _run_page(request, pk)


def _run_page(
    request: HttpRequest, pk: int, *, message_form: RunMessageForm | None = None, status: int = 200
) -> HttpResponse:
    viewing = run_for_viewer_or_404(
        pk=pk,
        user=request.user,
        queryset=Run.objects.select_related(
            "creation__workspace", "creation__author", "creation__contestant__comparison", "started_by"
        ),
    )
    run = viewing.run
    contestant = contestant_note(creation=run.creation, user=request.user, is_member=viewing.is_member)
    model_hidden = (
        contestant.model_hidden if contestant else model_hidden_from(creation=run.creation, user=request.user)
    )
    before = _before_seq(request)
    hidden = model_names(run.creation) if model_hidden else ()
    trajectory = run_trajectory(run=run, before_seq=before, hidden=hidden) if run.is_final else None
    not_kept = NotKept()
    if trajectory is not None:  # the latest steps' window holds the artifacts event; an earlier one does not
        not_kept = trajectory.rejected if before is None else rejected_outputs(run=run)
    context = {
        "run": run,
        "reason": reason_shown(run=run, model_hidden=model_hidden),
        "creation": run.creation,
        "workspace": run.creation.workspace if viewing.is_member else None,
        "can_create": viewing.can_create,
        "can_cancel": can_cancel_run(run=run, user=request.user, membership=viewing.membership),
        "contestant": contestant,
        "trajectory": trajectory,
        "live_after": 0 if run.is_final else live_replay_after(run=run),
        **(_artifacts_context(request, run) if run.is_final else {"artifacts": []}),
        "not_kept": not_kept,
        "message_form": message_form or RunMessageForm(),
    }
    return render(request, "creations/run_detail.html", context, status=status)


@with_platform_csp
@require_GET
def run_steps(request: HttpRequest, pk: int) -> HttpResponse:
    """Earlier steps of a run (`?before=<seq of the first step shown>`), as list items the
    page inserts above the ones it shows."""
    run = run_for_viewer_or_404(pk=pk, user=request.user).run
    hidden = model_names_hidden_from(creation=run.creation, user=request.user)
    trajectory = run_trajectory(run=run, before_seq=_before_seq(request) or 1, hidden=hidden)
    return render(request, "creations/_steps.html", {"run": run, "trajectory": trajectory})


def _before_seq(request: HttpRequest) -> int | None:
    """The `before` position asked for; anything that is not one means the latest steps."""
    value = request.GET.get("before", "")
    return int(value) if re.fullmatch(r"[0-9]{1,9}", value) and int(value) > 1 else None


@with_platform_csp
@require_GET
def run_artifacts(request: HttpRequest, pk: int) -> HttpResponse:
    """The artifacts of a run, as a fragment the live page swaps in when they are collected."""
    run = run_for_viewer_or_404(pk=pk, user=request.user).run
    context = {"run": run, **_artifacts_context(request, run), "not_kept": rejected_outputs(run=run)}
    return render(request, "creations/_artifact_grid.html", context)


def _artifacts_context(request: HttpRequest, run: Run) -> dict[str, object]:
    """A page of the run's files (`?page=`), and where its pager's links lead: the run's own page."""
    page = run_artifact_page(run=run, number=request.GET.get("page", ""))
    return {
        "artifacts": artifact_displays(page.object_list, user=request.user),
        "artifact_page": page,
        "artifact_page_url": f"{run.get_absolute_url()}?",
    }


@login_required
@with_platform_csp
@require_POST
def run_message_view(request: HttpRequest, pk: int) -> HttpResponse:
    """A member tells a running agent something; it reads it before its next step."""
    run = run_for_viewer_or_404(pk=pk, user=request.user).run
    form = RunMessageForm(request.POST)
    if form.is_valid():
        try:
            run_message_send(run=run, user=request.user, text=form.cleaned_data["text"])
        except PermissionDenied as error:
            form.add_error(None, str(error))
            return _run_page(request, pk, message_form=form, status=403)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            if request.headers.get("HX-Request"):
                return HttpResponse(status=204)
            messages.success(request, "Sent: the agent reads it before its next step.")
            return redirect(run)
    return _run_page(request, pk, message_form=form, status=400)


@login_required
@require_POST
def run_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = run_to_cancel_or_404(pk=pk, user=request.user)
    run = viewing.run
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
    if not creation_visible(creation=run.creation, user=request.user, membership=viewing.membership):
        # An admin stopping a colleague's private run: its page stays the author's.
        messages.success(request, f"Run {run.pk} was asked to stop." if cancelling else f"Run {run.pk} had ended.")
        return redirect(run.creation.workspace)
    return redirect(run)


# A field told without a hidden model's name is rewritten in the web process, so it is read there: at most
# this much of it (its start; the message says so). Such texts (a reason, a provider's error, the closing
# summary) are seldom more than a few kilobytes, but the summary is the model's to make as long as it likes.
HIDDEN_NAMES_READ_MAX_BYTES = 1024 * 1024


@require_GET
def run_event_overflow(request: HttpRequest, pk: int, seq: int, field: str) -> HttpResponseBase:
    """The whole text of an event's field, as plain text: kept in a file when it was
    too long to store inline, else from the event itself (pages show only its start)."""
    run = run_for_viewer_or_404(pk=pk, user=request.user).run
    event = get_object_or_404(RunEvent, run=run, seq=seq)
    payload = event.payload if isinstance(event.payload, dict) else {}
    overflow = payload.get("overflow") or {}
    entry = overflow.get(field) if isinstance(overflow, dict) else None
    name = entry.get("path") if isinstance(entry, dict) else None
    response: HttpResponseBase
    # A field in the platform's or a provider's words may name a blind contestant's model: told
    # without it, as the pages tell it.
    told = field in TOLD_FIELDS.get(event.kind, ())
    hidden = model_names_hidden_from(creation=run.creation, user=request.user) if told else ()
    if entry is None and isinstance(payload.get(field), str):
        response = HttpResponse(text_without_names(payload[field], hidden), content_type="text/plain; charset=utf-8")
    elif not (isinstance(name, str) and name.startswith(f"run-events/{run.pk}/") and default_storage.exists(name)):
        raise Http404("No such output.")
    elif hidden:
        response = HttpResponse(_told_without(name, hidden), content_type="text/plain; charset=utf-8")
    else:
        # Streamed in chunks: a FileResponse would be read whole into memory under ASGI.
        handle = default_storage.open(name, "rb")
        response = StreamingHttpResponse(file_chunks(handle), content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "") and not request.headers.get("HX-Request")


def _told_without(name: str, hidden: Sequence[str]) -> str:
    """The stored text `name` without the names `hidden`, read up to HIDDEN_NAMES_READ_MAX_BYTES."""
    with default_storage.open(name, "rb") as whole:
        data = whole.read(HIDDEN_NAMES_READ_MAX_BYTES + 1)
    text = text_without_names(data[:HIDDEN_NAMES_READ_MAX_BYTES].decode("utf-8", errors="ignore"), hidden)
    if len(data) > HIDDEN_NAMES_READ_MAX_BYTES:
        text += (
            f"\n… The rest is not shown while this run's model is hidden from you (the first "
            f"{HIDDEN_NAMES_READ_MAX_BYTES:,} bytes are above). Vote in its comparison to read it all."
        )
    return text
