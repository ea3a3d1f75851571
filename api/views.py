"""The Access tokens page: a person's own personal access tokens, made and revoked
in the browser. A new token is shown once, in the answer to the form that made it
(never in a URL or a redirect), and only its hash is kept. Making one asks for the
person's password again, counted as a login attempt (workspaces/rate_limits.py)."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from api.forms import TokenForm
from api.tokens import token_create, token_revoke, tokens_of
from workspaces.rate_limits import login_limit, over_limit


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def access_tokens(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    form, created = TokenForm(user=user), None
    if request.method == "POST" and over_limit(request, login_limit(), account=user.get_username()):
        # Past the limit the password is not checked: what was typed comes back, the password not.
        typed = {name: request.POST.get(name, "") for name in ("name", "scope", "expires_in_days")}
        context = {"form": TokenForm(user=user, initial=typed), "refusal": login_limit().message}
        return render(request, "api/tokens.html", {**context, "tokens": tokens_of(user=user)}, status=429)
    if request.method == "POST":
        form = TokenForm(request.POST, user=user)
        if form.is_valid():
            fields = {key: value for key, value in form.cleaned_data.items() if key != "password"}
            try:
                created = token_create(user=user, **fields)
            except ValidationError as error:
                for field, problems in error.message_dict.items():
                    form.add_error(field if field in form.fields else None, problems)
            else:
                form = TokenForm(user=user)
    context = {"form": form, "created": created, "tokens": tokens_of(user=user)}
    return render(request, "api/tokens.html", context, status=422 if form.errors else 200)


@login_required
@require_POST
def access_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = token_revoke(user=cast(User, request.user), pk=pk)
    if token is None:
        raise Http404("No such token.")
    messages.success(request, f"Token “{token.name}” revoked: scripts using it are refused from now on.")
    return redirect("access_tokens")
