"""Pages: new creation, live run, creation, artifact. Thin: parse, call a service, render."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from creations.artifact_display import artifact_displays
from creations.forms import CreationForm, ForkForm
from creations.models import Artifact, Creation, Run
from creations.page_security import with_platform_csp
from creations.permissions import creation_viewable_or_404, membership_for_creation
from creations.selectors import run_trajectory
from creations.services import creation_fork, creation_submit, run_rerun
from creations.starters import starter_get, starters
from workspaces.permissions import workspace_membership_or_404


def _signed_in(request: HttpRequest) -> User:
    """The signed-in user (behind @login_required)."""
    assert isinstance(request.user, User)
    return request.user


def _add_service_errors(form: CreationForm | ForkForm, error: ValidationError) -> None:
    """Put a service's ValidationError on the matching form fields (others on the form)."""
    if hasattr(error, "error_dict"):
        for field_name, field_errors in error.error_dict.items():
            target = {"model_endpoint": "model", "files": "uploads"}.get(field_name, field_name)
            form.add_error(target if target in form.fields else None, field_errors)
    else:
        form.add_error(None, error)


@login_required
@with_platform_csp
@require_http_methods(["GET", "POST"])
def creation_new(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    context = {
        "workspace": workspace,
        "membership": membership,
        "starters": starters(),
        "max_file_bytes": settings.UPLOAD_MAX_FILE_BYTES,
    }
    if not membership.can_create:
        return render(request, "creations/creation_new.html", {**context, "form": None}, status=403)
    initial = {}
    starter = starter_get(request.GET.get("starter", ""))
    if starter is not None:  # works without JavaScript: ?starter=<kind> fills the brief
        initial = {"brief": starter.brief, "title": starter.title, "starter": starter.kind}
    form = CreationForm(request.POST or None, request.FILES or None, workspace=workspace, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        files = list(data["uploads"])
        chosen = starter_get(data.get("starter") or "")
        if chosen is not None and data["brief"].strip() == chosen.brief.strip():
            names = {f.name for f in files}
            files += [upload for upload in chosen.input_uploads() if upload.name not in names]
        try:
            run = creation_submit(
                workspace=workspace,
                author=_signed_in(request),
                brief=data["brief"],
                title=data["title"],
                files=files,
                visibility=data["visibility"],
                model_endpoint=data["model"],
                max_steps=data["max_steps"],
                max_seconds=data["max_seconds"],
                max_tokens=data["max_tokens"],
            )
        except ValidationError as error:
            _add_service_errors(form, error)
        except PermissionDenied as error:
            form.add_error(None, str(error))
        else:
            return redirect(run)
    status = 400 if request.method == "POST" else 200
    return render(request, "creations/creation_new.html", {**context, "form": form}, status=status)


def _run_for_viewer(request: HttpRequest, pk: int) -> Run:
    run = get_object_or_404(Run.objects.select_related("creation__workspace", "creation__author"), pk=pk)
    creation_viewable_or_404(creation=run.creation, user=request.user)
    return run


@with_platform_csp
@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run_for_viewer(request, pk)
    membership = membership_for_creation(creation=run.creation, user=request.user)
    context = {
        "run": run,
        "creation": run.creation,
        "workspace": run.creation.workspace if membership else None,
        "can_create": bool(membership and membership.can_create),
        "trajectory": run_trajectory(run=run) if run.is_final else None,
        "artifacts": artifact_displays(run.artifacts.all(), user=request.user) if run.is_final else [],
    }
    return render(request, "creations/run_detail.html", context)


@with_platform_csp
@require_GET
def run_artifacts(request: HttpRequest, pk: int) -> HttpResponse:
    """The artifacts of a run, as a fragment the live page swaps in when they are collected."""
    run = _run_for_viewer(request, pk)
    displays = artifact_displays(run.artifacts.all(), user=request.user)
    return render(request, "creations/_artifact_grid.html", {"artifacts": displays, "run": run})


@with_platform_csp
@require_GET
def creation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    creation = get_object_or_404(
        Creation.objects.select_related("workspace", "author", "model_endpoint", "forked_from").prefetch_related(
            Prefetch("runs", queryset=Run.objects.order_by("-created_at"))
        ),
        pk=pk,
    )
    creation_viewable_or_404(creation=creation, user=request.user)
    runs = list(creation.runs.all())
    selected = next((r for r in runs if str(r.pk) == request.GET.get("run")), runs[0] if runs else None)
    membership = membership_for_creation(creation=creation, user=request.user)
    context = {
        "creation": creation,
        "runs": runs,
        "run": selected,
        "workspace": creation.workspace if membership else None,
        "can_create": bool(membership and membership.can_create),
        "inputs": list(creation.inputs.all()),
        "artifacts": artifact_displays(
            selected.artifacts.all() if selected else [], user=request.user, render_documents=True
        ),
        "trajectory": run_trajectory(run=selected) if selected else None,
        "fork_form": ForkForm(initial={"brief": creation.brief}),
    }
    return render(request, "creations/creation_detail.html", context)


@login_required
@require_POST
def creation_rerun(request: HttpRequest, pk: int) -> HttpResponse:
    creation = get_object_or_404(Creation.objects.select_related("workspace"), pk=pk)
    creation_viewable_or_404(creation=creation, user=request.user)
    try:
        run = run_rerun(creation=creation, user=_signed_in(request))
    except PermissionDenied as error:
        messages.error(request, str(error))
        return redirect(creation)
    return redirect(run)


@login_required
@with_platform_csp
@require_POST
def creation_fork_view(request: HttpRequest, pk: int) -> HttpResponse:
    creation = get_object_or_404(Creation.objects.select_related("workspace"), pk=pk)
    creation_viewable_or_404(creation=creation, user=request.user)
    form = ForkForm(request.POST)
    if form.is_valid():
        try:
            run = creation_fork(creation=creation, user=_signed_in(request), brief=form.cleaned_data["brief"])
        except PermissionDenied as error:
            messages.error(request, str(error))
            return redirect(creation)
        except ValidationError as error:
            _add_service_errors(form, error)
        else:
            return redirect(run)
    messages.error(request, "The fork was not started: " + " ".join(str(e) for e in form.errors.get("brief", [])))
    return redirect(creation)


@with_platform_csp
@require_GET
def artifact_detail(request: HttpRequest, pk: int) -> HttpResponse:
    artifact = get_object_or_404(Artifact.objects.select_related("run__creation__workspace"), pk=pk)
    creation_viewable_or_404(creation=artifact.run.creation, user=request.user)
    (display,) = artifact_displays([artifact], user=request.user, render_documents=True)
    membership = membership_for_creation(creation=artifact.run.creation, user=request.user)
    context = {
        "display": display,
        "artifact": artifact,
        "creation": artifact.run.creation,
        "workspace": artifact.run.creation.workspace if membership else None,
    }
    return render(request, "creations/artifact_detail.html", context)
