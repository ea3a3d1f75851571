from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from workspaces.forms import SignUpForm
from workspaces.invitations import invitation_accept
from workspaces.rate_limits import over_limit, signup_limit
from workspaces.selectors import workspaces_for_user
from workspaces.services import WorkspaceRuleError
from workspaces.views.members import PENDING_INVITATION_KEY


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and over_limit(request, signup_limit()):
        form.is_valid()  # shows what was typed, with any mistakes, beside the limit's message
        form.add_error(None, signup_limit().message)
        return render(request, "registration/signup.html", {"form": form}, status=429)
    if request.method == "POST" and form.is_valid():
        user = form.save()  # the post_save signal creates the personal workspace
        token = request.session.pop(PENDING_INVITATION_KEY, None)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        if token:  # signed up from an invitation link: join that workspace at once
            try:
                joined = invitation_accept(token=token, user=user)
            except WorkspaceRuleError as error:
                messages.error(request, str(error))
            else:
                messages.success(request, f"Welcome to {joined.workspace.name}.")
                return redirect(joined.workspace)
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Send a signed-in person to their first (personal) workspace."""
    workspace = workspaces_for_user(user=request.user).first()
    if workspace is None:
        return render(request, "workspaces/no_workspace.html")
    return redirect(workspace)
