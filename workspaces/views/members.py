"""The members page (people, roles, invitations) and accepting an invitation."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from workspaces.forms import InvitationForm, RoleForm
from workspaces.invitations import (
    MALFORMED_LINK,
    invitation_accept,
    invitation_create,
    invitation_for_token,
    invitation_problem,
    invitation_revoke,
    looks_like_a_token,
)
from workspaces.models import Invitation, Membership, Role
from workspaces.permissions import workspace_membership_or_404
from workspaces.selectors import workspace_members, workspace_open_invitations
from workspaces.services import WorkspaceRuleError, membership_change_role, membership_remove

PENDING_INVITATION_KEY = "pending_invitation"


@login_required
@require_http_methods(["GET", "POST"])
def workspace_members_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    form = InvitationForm(request.POST or None)
    new_link, new_invitation = None, None
    if request.method == "POST" and form.is_valid():
        try:
            created = invitation_create(
                workspace=workspace,
                actor=request.user,  # type: ignore[arg-type]
                role=form.cleaned_data["role"],
                email=form.cleaned_data["email"],
            )
        except WorkspaceRuleError as error:
            form.add_error(error.field, str(error))
        else:
            new_link, new_invitation = created.url, created.invitation
            form = InvitationForm()
    context = {
        "workspace": workspace,
        "membership": membership,
        "members": workspace_members(workspace=workspace),
        "invitations": workspace_open_invitations(workspace=workspace) if membership.can_manage else [],
        "form": form,
        "role_choices": Role.choices,
        "new_link": new_link,
        "new_invitation": new_invitation,
    }
    return render(request, "workspaces/members.html", context, status=400 if form.errors else 200)


def _member_of(slug: str, request: HttpRequest, membership_id: int) -> tuple[Membership, Membership]:
    actor = workspace_membership_or_404(slug=slug, user=request.user)
    target = get_object_or_404(
        Membership.objects.select_related("workspace", "user"), pk=membership_id, workspace=actor.workspace
    )
    return actor, target


@login_required
@require_POST
def membership_role_view(request: HttpRequest, slug: str, membership_id: int) -> HttpResponse:
    _, target = _member_of(slug, request, membership_id)
    form = RoleForm(request.POST)
    try:
        if not form.is_valid():
            raise WorkspaceRuleError("Choose one of the roles.")
        membership_change_role(membership=target, actor=request.user, role=form.cleaned_data["role"])  # type: ignore[arg-type]
    except WorkspaceRuleError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{target.user.get_username()} is now {target.get_role_display().lower()}.")
    return redirect("workspace_members", slug=slug)


@login_required
@require_POST
def membership_remove_view(request: HttpRequest, slug: str, membership_id: int) -> HttpResponse:
    _, target = _member_of(slug, request, membership_id)
    try:
        membership_remove(membership=target, actor=request.user)  # type: ignore[arg-type]
    except WorkspaceRuleError as error:
        messages.error(request, str(error))
        return redirect("workspace_members", slug=slug)
    if target.user_id == request.user.pk:
        return redirect("home")
    messages.success(request, f"{target.user.get_username()} was removed.")
    return redirect("workspace_members", slug=slug)


@login_required
@require_POST
def invitation_revoke_view(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    actor = workspace_membership_or_404(slug=slug, user=request.user)
    invitation = get_object_or_404(Invitation, pk=pk, workspace=actor.workspace)
    try:
        invitation_revoke(invitation=invitation, actor=request.user)  # type: ignore[arg-type]
    except WorkspaceRuleError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "The invitation was withdrawn; its link no longer works.")
    return redirect("workspace_members", slug=slug)


@require_http_methods(["GET", "POST"])
def invitation_accept_view(request: HttpRequest, token: str) -> HttpResponse:
    if not looks_like_a_token(token):
        # A link cut short or mangled on its way (by a mail client, say): the invitation page says so.
        return render(request, "workspaces/invitation.html", {"problem": MALFORMED_LINK}, status=404)
    invitation = invitation_for_token(token)
    problem = invitation_problem(invitation)
    if invitation is None:
        return render(request, "workspaces/invitation.html", {"problem": problem}, status=404)
    if request.user.is_authenticated and request.method == "POST" and problem is None:
        try:
            joined = invitation_accept(token=token, user=request.user)
        except WorkspaceRuleError as error:
            problem = str(error)
        else:
            request.session.pop(PENDING_INVITATION_KEY, None)
            messages.success(request, f"Welcome to {joined.workspace.name}.")
            return redirect(joined.workspace)
    if not request.user.is_authenticated and problem is None:
        request.session[PENDING_INVITATION_KEY] = token  # a sign-up from here joins at once
    context = {"invitation": invitation, "problem": problem, "token": token}
    return render(request, "workspaces/invitation.html", context, status=410 if problem else 200)
