"""The pages of notifications: the list (the bell leads there), marking read, what each person
wants to hear of, and following a creation. Thin: parse, call a service, render."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from creations.access import creation_for_viewer_or_404
from creations.notifications.forms import NotificationSettingsForm
from creations.notifications.selectors import notification_of, notifications_shown, settings_for
from creations.notifications.services import (
    follow_set,
    notification_mark_read,
    notification_settings_save,
    notifications_mark_all_read,
)

PAGE_SIZE = 30


def _signed_in(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


@login_required
@require_GET
def notifications_list(request: HttpRequest) -> HttpResponse:
    shown = notifications_shown(request.user)
    page = Paginator(shown, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "notifications/list.html", {"page": page})


@login_required
@require_POST
def notification_read(request: HttpRequest, pk: int) -> HttpResponse:
    """Mark one read; with `open`, go where it leads."""
    notification = notification_of(pk=pk, user=request.user)
    if notification is None:
        raise Http404("No such notification.")
    notification_mark_read(notification=notification, user=_signed_in(request))
    if request.POST.get("open") and notification.path:
        return redirect(notification.path)
    return redirect("notifications")


@login_required
@require_POST
def notifications_read_all(request: HttpRequest) -> HttpResponse:
    count = notifications_mark_all_read(user=_signed_in(request))
    messages.success(request, f"{count} notification{'s' if count != 1 else ''} marked read.")
    return redirect("notifications")


@login_required
@require_http_methods(["GET", "POST"])
def notification_settings(request: HttpRequest) -> HttpResponse:
    user = _signed_in(request)
    form = NotificationSettingsForm(request.POST or None, choices=settings_for(user))
    if request.method == "POST" and form.is_valid():
        notification_settings_save(user=user, choices=form.chosen())
        messages.success(request, "Saved: you hear of what is ticked.")
        return redirect("notification_settings")
    return render(request, "notifications/settings.html", {"form": form, "has_email": bool(user.email)})


@login_required
@require_POST
def creation_follow(request: HttpRequest, pk: int) -> HttpResponse:
    """Follow a creation (`following=1`) or stop (`following=0`); back to its page."""
    creation = creation_for_viewer_or_404(pk=pk, user=request.user).creation
    following = request.POST.get("following") == "1"
    try:
        follow_set(creation=creation, user=_signed_in(request), following=following)
    except PermissionDenied as error:
        messages.error(request, str(error))
        return redirect(creation)
    if following:
        messages.success(request, "You follow this creation: you hear when its runs end and when it gets comments.")
    else:
        messages.success(request, "You no longer follow this creation.")
    return redirect(creation)
