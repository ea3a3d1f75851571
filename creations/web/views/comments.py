"""A comment's own pages: edit it (its author), delete it (its author, owners and admins).
Writing one is on the creation's page (creations.web.views.creations). Thin: parse, call a service, render."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from creations.comments.access import CommentViewing, comment_for_reader_or_404
from creations.comments.services import comment_delete, comment_edit
from creations.web.csp import with_platform_csp
from creations.web.forms import CommentEditForm
from workspaces.permissions import EDIT_COMMENT_REFUSED


def _signed_in(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _back_to(viewing: CommentViewing, *, anchor: bool = True) -> str:
    comment = viewing.comment
    query = f"?run={comment.run_id}" if comment.run_id else ""
    return f"{comment.creation.get_absolute_url()}{query}" + (f"#comment-{comment.pk}" if anchor else "")


@login_required
@with_platform_csp
@require_http_methods(["GET", "POST"])
def comment_edit_view(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = comment_for_reader_or_404(pk=pk, user=request.user)
    context = {"comment": viewing.comment, "creation": viewing.comment.creation, "back": _back_to(viewing)}
    if not viewing.may_edit(request.user):
        return render(request, "creations/comment_edit.html", {**context, "refused": EDIT_COMMENT_REFUSED}, status=403)
    form = CommentEditForm(request.POST or None, initial={"text": viewing.comment.text})
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                comment_edit(viewing=viewing, user=_signed_in(request), text=form.cleaned_data["text"])
            except PermissionDenied as error:
                form.add_error(None, str(error))
                status = 403
            except ValidationError as error:
                form.add_error("text" if hasattr(error, "error_dict") and "text" in error.error_dict else None, error)
            else:
                messages.success(request, "Comment saved.")
                return redirect(_back_to(viewing))
    return render(request, "creations/comment_edit.html", {**context, "form": form}, status=status)


@login_required
@with_platform_csp
@require_POST
def comment_delete_view(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = comment_for_reader_or_404(pk=pk, user=request.user)
    try:
        comment_delete(viewing=viewing, user=_signed_in(request))
    except PermissionDenied as error:
        messages.error(request, str(error))
        return redirect(_back_to(viewing))
    messages.success(request, "Comment deleted.")
    return redirect(_back_to(viewing, anchor=False) + "#comments")
