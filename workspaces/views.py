from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from workspaces.forms import SignUpForm
from workspaces.selectors import workspaces_for_user


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()  # the post_save signal creates the personal workspace
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Send a signed-in person to their first (personal) workspace."""
    workspace = workspaces_for_user(user=request.user).first()
    if workspace is None:
        return render(request, "workspaces/no_workspace.html")
    return redirect(workspace)
