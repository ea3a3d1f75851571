"""A creation's pages: new, detail, run again, refine, restore a version, fork, rename, comment, delete.
Thin: parse, call a service, render."""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from config.body_limits import BodyRefusal, refused_body_page
from creations.access import (
    CreationViewing,
    can_delete_creation,
    creation_for_viewer_or_404,
    creation_to_delete_or_404,
    creation_visible,
    run_for_viewer_or_404,
)
from creations.arena.services import comparison_submit
from creations.comments.services import comment_create
from creations.models import Creation, Run
from creations.page_views import count_creation_view
from creations.runs.admission import RunQueueFull
from creations.runs.inputs import INPUT_NAME_RULE, input_renames
from creations.runs.services import (
    creation_delete,
    creation_fork,
    creation_rename,
    creation_restore_version,
    creation_submit,
    run_refine,
    run_rerun,
)
from creations.web.attachments import attachments_for
from creations.web.csp import with_platform_csp
from creations.web.forms import CommentForm, CreationForm, DeleteCreationForm, ForkForm, RefineForm, RenameForm
from creations.web.starters import starter_get, starters
from creations.web.views.creation_page import creation_page
from workspaces.models import Membership
from workspaces.permissions import may_start_runs, workspace_membership_or_404
from workspaces.rate_limits import over_limit, submission_limit

# The new-creation form's second button: the same brief with several models (creations.arena).
COMPARE_ACTION = "compare"


def _signed_in(request: HttpRequest) -> User:
    """The signed-in user (behind @login_required)."""
    assert isinstance(request.user, User)
    return request.user


def _add_service_errors(
    form: CreationForm | ForkForm | RefineForm | CommentForm | RenameForm,
    error: ValidationError,
    *,
    comparing: bool = False,
) -> None:
    """Put a service's ValidationError on the matching form fields (others on the form). `comparing`:
    the models are the ones to compare, not the single model."""
    model_field = "compare_models" if comparing else "model"
    if hasattr(error, "error_dict"):
        for field_name, field_errors in error.error_dict.items():
            target = {"model_endpoint": model_field, "models": model_field, "files": "uploads"}.get(
                field_name, field_name
            )
            form.add_error(target if target in form.fields else None, field_errors)
    else:
        form.add_error(None, error)


def _refusal_status(error: ValidationError) -> int:
    """A full queue is "too many" (429), as the submission limit is; other refusals are bad input (400)."""
    return 429 if isinstance(error, RunQueueFull) else 400


def _files_again_note(names: list[str]) -> str:
    """A browser cannot fill a file field back in: a refused form says which files to choose again."""
    shown = ", ".join(name or "?" for name in names[:5]) + (", …" if len(names) > 5 else "")
    return f"Nothing was started, and browsers do not keep chosen files: choose your files again ({shown})."


def _ask_for_files_again(form: CreationForm, uploads: list[UploadedFile]) -> None:
    if uploads:
        form.add_error("uploads", _files_again_note([upload.name or "" for upload in uploads]))


def _new_creation_context(request: HttpRequest, membership: Membership) -> dict[str, Any]:
    return {
        "workspace": membership.workspace,
        "membership": membership,
        "starters": starters(),
        "max_file_bytes": settings.UPLOAD_MAX_FILE_BYTES,
        "max_files": settings.RUN_INPUT_MAX_FILES,
        "max_total_bytes": settings.RUN_INPUT_MAX_BYTES,
        "attachments": attachments_for(request, workspace=membership.workspace),
    }


def _creation_form_refused(request: HttpRequest, refusal: BodyRefusal, slug: str) -> HttpResponse:
    """The form again when the request was too large to take (config.request_limits): with what was
    typed when its text could be read, and why nothing was started."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    context = _new_creation_context(request, membership)
    if not may_start_runs(membership):
        return render(request, "creations/creation_new.html", {**context, "form": None}, status=403)
    form = CreationForm(request.POST if refusal.text_kept else None, workspace=membership.workspace)
    if form.is_bound:
        form.is_valid()  # anything else wrong is said at once, beside the refusal
    said = [refusal.message]
    if refusal.file_names:
        said.append(_files_again_note(list(refusal.file_names)))
    else:
        said.append("Nothing was started.")
    if not refusal.text_kept:
        said.append("What was typed could not be read back: write it again.")
    return render(
        request, "creations/creation_new.html", {**context, "form": form, "refusal": said}, status=refusal.status
    )


def _say_renamed_inputs(request: HttpRequest, creation: Creation) -> None:
    """On the page the person lands on: each file the platform had to rename, and whether the brief
    calls it by its old name (the agent is told both names)."""
    for renamed in input_renames(creation.brief, creation.inputs.all()):
        text = f"Renamed “{renamed.sent_as}” to “{renamed.name}”: {INPUT_NAME_RULE}"
        if renamed.in_brief:
            text += f" Your brief calls it “{renamed.sent_as}”: the agent is told that this is {renamed.name}."
        messages.warning(request, text)


@refused_body_page(_creation_form_refused)
@login_required
@with_platform_csp
@require_http_methods(["GET", "POST"])
def creation_new(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    context = _new_creation_context(request, membership)
    attachments = context["attachments"]
    if not may_start_runs(membership):
        return render(request, "creations/creation_new.html", {**context, "form": None}, status=403)
    initial = {}
    starter = starter_get(request.GET.get("starter", ""))
    if starter is not None:  # works without JavaScript: ?starter=<kind> fills the brief
        initial = {"brief": starter.brief, "title": starter.title, "starter": starter.kind}
    form = CreationForm(request.POST or None, request.FILES or None, workspace=workspace, initial=initial)
    if request.method == "POST" and over_limit(request, submission_limit()):
        form.is_valid()
        form.add_error(None, submission_limit().message)
        _ask_for_files_again(form, request.FILES.getlist("uploads"))
        return render(request, "creations/creation_new.html", {**context, "form": form}, status=429)
    refusal_status = 400
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        files = list(data["uploads"])
        chosen = starter_get(data.get("starter") or "")
        if chosen is not None and data["brief"].strip() == chosen.brief.strip():
            names = {f.name for f in files}
            files += [upload for upload in chosen.input_uploads() if upload.name not in names]
        try:
            if request.POST.get("action") == COMPARE_ACTION:
                comparison = comparison_submit(
                    workspace=workspace,
                    author=_signed_in(request),
                    brief=data["brief"],
                    title=data["title"],
                    endpoints=data["compare_models"],
                    blind=data["blind"],
                    files=files,
                    artifact_ids=attachments.ids,
                    visibility=data["visibility"],
                    max_steps=data["max_steps"],
                    max_seconds=data["max_seconds"],
                    max_tokens=data["max_tokens"],
                )
                return redirect(comparison)
            run = creation_submit(
                workspace=workspace,
                author=_signed_in(request),
                brief=data["brief"],
                title=data["title"],
                files=files,
                artifact_ids=attachments.ids,
                visibility=data["visibility"],
                model_endpoint=data["model"],
                max_steps=data["max_steps"],
                max_seconds=data["max_seconds"],
                max_tokens=data["max_tokens"],
            )
        except ValidationError as error:
            _add_service_errors(form, error, comparing=request.POST.get("action") == COMPARE_ACTION)
            refusal_status = _refusal_status(error)
        except PermissionDenied as error:
            form.add_error(None, str(error))
        else:
            _say_renamed_inputs(request, run.creation)
            return redirect(run)
    status = 200
    if request.method == "POST":
        status = refusal_status
        _ask_for_files_again(form, request.FILES.getlist("uploads"))
    return render(request, "creations/creation_new.html", {**context, "form": form}, status=status)


def _creation_for_page(request: HttpRequest, pk: int) -> CreationViewing:
    return creation_for_viewer_or_404(
        pk=pk,
        user=request.user,
        queryset=Creation.objects.select_related(
            "workspace", "author", "model_endpoint", "forked_from__author", "contestant__comparison"
        ).prefetch_related(Prefetch("runs", queryset=Run.objects.select_related("started_by").order_by("-version"))),
    )


@with_platform_csp
@require_GET
def creation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = _creation_for_page(request, pk)
    count_creation_view(creation=viewing.creation, viewer=request.user)
    return creation_page(request, viewing)


@login_required
@require_POST
def creation_rerun(request: HttpRequest, pk: int) -> HttpResponse:
    creation = creation_for_viewer_or_404(pk=pk, user=request.user).creation
    try:
        run = run_rerun(creation=creation, user=_signed_in(request))
    except PermissionDenied as error:
        messages.error(request, str(error))
        return redirect(creation)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect(creation)
    return redirect(run)


@login_required
@with_platform_csp
@require_POST
def creation_fork_view(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = _creation_for_page(request, pk)
    form = ForkForm(request.POST)
    status = 400
    if form.is_valid():
        try:
            run = creation_fork(creation=viewing.creation, user=_signed_in(request), brief=form.cleaned_data["brief"])
        except PermissionDenied as error:
            messages.error(request, str(error))
            return redirect(viewing.creation)
        except ValidationError as error:
            _add_service_errors(form, error)
            status = _refusal_status(error)
        else:
            return redirect(run)
    # Back to the page with the edited brief as typed, and why it was not started.
    return creation_page(request, viewing, fork_form=form, status=status)


@login_required
@with_platform_csp
@require_POST
def creation_comment(request: HttpRequest, pk: int) -> HttpResponse:
    """A comment on the creation, or on the version shown (`run` with `on_version`); a refused one
    comes back on the page with its text as typed, and why."""
    viewing = _creation_for_page(request, pk)
    form = CommentForm(request.POST)
    selected = next((r for r in viewing.creation.runs.all() if str(r.pk) == request.POST.get("run")), None)
    status = 400
    if form.is_valid():
        try:
            comment = comment_create(
                creation=viewing.creation,
                user=_signed_in(request),
                text=form.cleaned_data["text"],
                run=selected if form.cleaned_data["on_version"] else None,
            )
        except PermissionDenied as error:
            messages.error(request, str(error))  # said at the top: the form is not there for those refused
            status = 403
        except ValidationError as error:
            _add_service_errors(form, error)
        else:
            query = f"?run={selected.pk}" if selected is not None else ""
            return redirect(f"{viewing.creation.get_absolute_url()}{query}#comment-{comment.pk}")
    return creation_page(
        request, viewing, comment_form=form, selected_pk=selected.pk if selected else None, status=status
    )


@login_required
@with_platform_csp
@require_POST
def creation_delete_view(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = creation_to_delete_or_404(pk=pk, user=request.user)
    creation = viewing.creation
    if not can_delete_creation(creation=creation, user=request.user, membership=viewing.membership):
        messages.error(request, "You can delete the creations you made; owners and admins can delete any.")
        return creation_page(request, viewing, status=403)
    form = DeleteCreationForm(request.POST)
    status = 400
    if form.is_valid():
        try:
            creation_delete(creation=creation, user=_signed_in(request))
        except ValidationError as error:
            form.add_error(None, error)
            status = 409
        else:
            messages.success(request, f"“{creation}” was deleted, with its runs and their files.")
            return redirect(creation.workspace)
    if not creation_visible(creation=creation, user=request.user, membership=viewing.membership):
        # An admin deleting a colleague's private creation: its page stays the author's.
        reasons = " ".join(str(message) for errors in form.errors.values() for message in errors)
        messages.error(request, f"Nothing was deleted: {reasons}")
        return redirect(creation.workspace)
    return creation_page(request, viewing, delete_form=form, status=status)


@login_required
@with_platform_csp
@require_POST
def run_refine_view(request: HttpRequest, pk: int) -> HttpResponse:
    """ "What should change?": the next version, continuing from version `pk`."""
    run = run_for_viewer_or_404(pk=pk, user=request.user).run
    viewing = _creation_for_page(request, run.creation_id)
    form = RefineForm(request.POST)
    status = 400
    if over_limit(request, submission_limit()):
        form.is_valid()
        form.add_error(None, submission_limit().message)
        status = 429
    elif form.is_valid():
        try:
            new_version = run_refine(run=run, user=_signed_in(request), instruction=form.cleaned_data["instruction"])
        except PermissionDenied as error:
            form.add_error(None, str(error))
            status = 403
        except ValidationError as error:
            _add_service_errors(form, error)
            status = _refusal_status(error)
        else:
            return redirect(new_version)
    return creation_page(request, viewing, refine_form=form, selected_pk=run.pk, status=status)


@login_required
@require_POST
def creation_restore_view(request: HttpRequest, pk: int, run_pk: int) -> HttpResponse:
    """Show an earlier version in the gallery again; nothing is deleted."""
    creation = creation_for_viewer_or_404(pk=pk, user=request.user).creation
    run = creation.runs.filter(pk=run_pk).first()
    if run is None:
        raise Http404("No such version.")
    try:
        creation_restore_version(creation=creation, run=run, user=_signed_in(request))
    except (PermissionDenied, ValidationError) as error:
        messages.error(request, " ".join(getattr(error, "messages", [str(error)])))
    else:
        messages.success(request, f"v{run.version} is the version the gallery shows now.")
    return redirect(f"{creation.get_absolute_url()}?run={run.pk}")


@login_required
@with_platform_csp
@require_POST
def creation_rename_view(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = _creation_for_page(request, pk)
    form = RenameForm(request.POST)
    status = 400
    if form.is_valid():
        try:
            creation_rename(creation=viewing.creation, user=_signed_in(request), title=form.cleaned_data["title"])
        except PermissionDenied as error:
            form.add_error(None, str(error))
            status = 403
        except ValidationError as error:
            _add_service_errors(form, error)
        else:
            messages.success(request, f"It is called “{viewing.creation}” now.")
            return redirect(viewing.creation)
    return creation_page(request, viewing, rename_form=form, status=status)
