"""The workspace's webhook pages (owners and admins): the list with a form to add one (its secret
shown once), and a webhook's page: change it, send a test, make a new secret, delete it, and its
delivery log. Thin: parse, call a service, render."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from creations.web.csp import with_platform_csp
from creations.webhooks.forms import WebhookForm
from creations.webhooks.selectors import (
    DELIVERIES_SHOWN,
    deliveries_of,
    webhook_for_manager_or_404,
    webhooks_of_workspace,
)
from creations.webhooks.services import (
    webhook_create,
    webhook_delete,
    webhook_new_secret,
    webhook_send_test,
    webhook_update,
)
from workspaces.permissions import WEBHOOKS_REFUSED, may_manage_webhooks, workspace_membership_or_404


def _signed_in(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _add_service_errors(form: WebhookForm, error: ValidationError) -> None:
    if hasattr(error, "error_dict"):
        for field, errors in error.error_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, error)


@login_required
@with_platform_csp
@require_http_methods(["GET", "POST"])
def workspace_webhooks(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    context: dict[str, Any] = {"workspace": workspace, "membership": membership, "refusal": WEBHOOKS_REFUSED}
    if not may_manage_webhooks(membership):
        return render(request, "webhooks/workspace_webhooks.html", {**context, "allowed": False}, status=403)
    form = WebhookForm(request.POST or None, initial={"events": ["run.succeeded", "run.failed"], "is_active": True})
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                made = webhook_create(
                    workspace=workspace,
                    user=_signed_in(request),
                    url=form.cleaned_data["url"],
                    events=form.cleaned_data["events"],
                    description=form.cleaned_data["description"],
                )
            except ValidationError as error:
                _add_service_errors(form, error)
            else:
                if not form.cleaned_data["is_active"]:
                    webhook_update(webhook=made.webhook, user=_signed_in(request), is_active=False)
                context["made"] = made
                form, status = WebhookForm(initial={"events": made.webhook.events, "is_active": True}), 200
    context.update(allowed=True, form=form, webhooks=webhooks_of_workspace(workspace_id=workspace.pk))
    return render(request, "webhooks/workspace_webhooks.html", context, status=status)


@login_required
@with_platform_csp
@require_http_methods(["GET", "POST"])
def webhook_detail(request: HttpRequest, pk: int) -> HttpResponse:
    webhook = webhook_for_manager_or_404(pk=pk, user=request.user)  # PermissionDenied: the 403 page says why
    initial = {k: getattr(webhook, k) for k in ("url", "events", "description", "is_active")}
    form = WebhookForm(request.POST or None, initial=initial)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                webhook_update(webhook=webhook, user=_signed_in(request), **form.cleaned_data)
            except ValidationError as error:
                _add_service_errors(form, error)
            else:
                messages.success(request, "Saved.")
                return redirect("webhook_detail", pk=webhook.pk)
    context = {
        "workspace": webhook.workspace,
        "webhook": webhook,
        "form": form,
        "deliveries": deliveries_of(webhook)[:DELIVERIES_SHOWN],
    }
    return render(request, "webhooks/webhook_detail.html", context, status=status)


@login_required
@require_POST
def webhook_test(request: HttpRequest, pk: int) -> HttpResponse:
    webhook = webhook_for_manager_or_404(pk=pk, user=request.user)
    webhook_send_test(webhook=webhook, user=_signed_in(request))
    messages.success(request, "A test delivery is on its way: it appears in the log below.")
    return redirect("webhook_detail", pk=webhook.pk)


@login_required
@with_platform_csp
@require_POST
def webhook_secret(request: HttpRequest, pk: int) -> HttpResponse:
    webhook = webhook_for_manager_or_404(pk=pk, user=request.user)
    secret = webhook_new_secret(webhook=webhook, user=_signed_in(request))
    context = {
        "workspace": webhook.workspace,
        "webhook": webhook,
        "form": WebhookForm(initial={k: getattr(webhook, k) for k in ("url", "events", "description", "is_active")}),
        "deliveries": deliveries_of(webhook)[:DELIVERIES_SHOWN],
        "new_secret": secret,
    }
    return render(request, "webhooks/webhook_detail.html", context)


@login_required
@require_POST
def webhook_delete_view(request: HttpRequest, pk: int) -> HttpResponse:
    webhook = webhook_for_manager_or_404(pk=pk, user=request.user)
    slug = webhook.workspace.slug
    webhook_delete(webhook=webhook, user=_signed_in(request))
    messages.success(request, "The webhook is deleted: nothing more is sent to it.")
    return redirect("workspace_webhooks", slug=slug)
