from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.views import LoginView, PasswordResetView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from workspaces.accounts import account_with_email, sign_up_notice_send
from workspaces.forms import SignUpForm
from workspaces.invitations import invitation_accept
from workspaces.rate_limits import login_limit, over_limit, password_reset_limit, sign_up_notice_limit, signup_limit
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
        email = form.cleaned_data["email"]
        owner = account_with_email(email)
        if owner is not None:
            if not over_limit(request, sign_up_notice_limit(), account=email):
                sign_up_notice_send(user=owner)
            return render(request, "registration/signup_check_inbox.html", {"email": email})
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


class LimitedLoginView(LoginView):
    """Django's login, counted per account named and per address before any password is checked:
    past the limit the password is not even looked at, so guessing goes no faster."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        limit, username = login_limit(), request.POST.get("username", "")
        if over_limit(request, limit, account=username):
            form = self.get_form_class()(request, initial={"username": username})
            return self.render_to_response(self.get_context_data(form=form, refusal=limit.message), status=429)
        return super().post(request, *args, **kwargs)


class LimitedPasswordResetView(PasswordResetView):
    """Django's password reset, counted per email asked for and per address: a mailbox is not to be
    flooded with reset links. The answer never says whether the email has an account."""

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        limit = password_reset_limit()
        if over_limit(self.request, limit, account=form.cleaned_data["email"]):
            form.add_error(None, limit.message)
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().form_valid(form)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Send a signed-in person to their first (personal) workspace."""
    workspace = workspaces_for_user(user=request.user).first()
    if workspace is None:
        return render(request, "workspaces/no_workspace.html")
    return redirect(workspace)
