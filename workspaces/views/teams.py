"""Team workspaces: create one, rename it, delete it, leave it."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from workspaces.forms import WorkspaceCreateForm, WorkspaceDeleteForm, WorkspaceRenameForm
from workspaces.permissions import workspace_membership_or_404
from workspaces.services import (
    WorkspaceRuleError,
    membership_leave,
    workspace_allow_viewers_to_comment,
    workspace_create,
    workspace_delete,
    workspace_rename,
)


@login_required
@require_http_methods(["GET", "POST"])
def workspace_new(request: HttpRequest) -> HttpResponse:
    form = WorkspaceCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            workspace = workspace_create(
                name=form.cleaned_data["name"],
                slug=form.cleaned_data["slug"],
                owner=request.user,  # type: ignore[arg-type]
            )
        except WorkspaceRuleError as error:
            form.add_error(error.field, str(error))
        else:
            messages.success(request, f"{workspace.name} is ready. Invite your colleagues from Members.")
            return redirect(workspace)
    return render(request, "workspaces/workspace_new.html", {"form": form}, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def workspace_settings(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    initial = {"name": workspace.name, "viewers_may_comment": workspace.viewers_may_comment}
    rename = WorkspaceRenameForm(request.POST or None, initial=initial)
    if request.method == "POST" and rename.is_valid():
        try:
            workspace_rename(workspace=workspace, actor=request.user, name=rename.cleaned_data["name"])  # type: ignore[arg-type]
            if rename.cleaned_data["viewers_may_comment"] != workspace.viewers_may_comment:
                workspace_allow_viewers_to_comment(
                    workspace=workspace,
                    actor=request.user,  # type: ignore[arg-type]
                    allowed=rename.cleaned_data["viewers_may_comment"],
                )
        except WorkspaceRuleError as error:
            rename.add_error(error.field or None, str(error))
        else:
            messages.success(request, "Saved.")
            return redirect("workspace_settings", slug=workspace.slug)
    context = {"workspace": workspace, "membership": membership, "rename": rename, "delete": WorkspaceDeleteForm()}
    return render(request, "workspaces/settings.html", context, status=400 if rename.errors else 200)


@login_required
@require_POST
def workspace_delete_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    form = WorkspaceDeleteForm(request.POST)
    if form.is_valid():
        try:
            workspace_delete(workspace=workspace, actor=request.user, confirmation=form.cleaned_data["confirm"])  # type: ignore[arg-type]
        except WorkspaceRuleError as error:
            form.add_error("confirm" if error.field else None, str(error))
        else:
            messages.success(request, f"{workspace.name} and everything in it were deleted.")
            return redirect("home")
    context = {
        "workspace": workspace,
        "membership": membership,
        "rename": WorkspaceRenameForm(
            initial={"name": workspace.name, "viewers_may_comment": workspace.viewers_may_comment}
        ),
        "delete": form,
    }
    return render(request, "workspaces/settings.html", context, status=400)


@login_required
@require_POST
def workspace_leave(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    try:
        membership_leave(workspace=membership.workspace, user=request.user)  # type: ignore[arg-type]
    except WorkspaceRuleError as error:
        messages.error(request, str(error))
        return redirect("workspace_members", slug=slug)
    messages.success(request, f"You left {membership.workspace.name}.")
    return redirect("home")
