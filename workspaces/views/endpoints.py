"""The workspace's Models page: its OpenAI-compatible endpoints, and for owners
and admins adding, editing, testing, switching off and deleting them."""

import json
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from sandboxes.agent.endpoint_addresses import public_url
from workspaces.endpoints import (
    EndpointFields,
    endpoint_create,
    endpoint_delete,
    endpoint_set_enabled,
    endpoint_test_connection,
    endpoint_update,
)
from workspaces.forms import ModelEndpointForm
from workspaces.models import Membership, ModelEndpoint
from workspaces.permissions import workspace_membership_or_404
from workspaces.selectors import workspace_endpoint_get, workspace_endpoints
from workspaces.services import WorkspaceRuleError


def _manager_or_403(slug: str, request: HttpRequest) -> Membership:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    if not membership.can_manage:
        raise PermissionDenied("Only the workspace's owners and admins manage its models.")
    return membership


def _endpoint_or_404(membership: Membership, pk: int) -> ModelEndpoint:
    endpoint = workspace_endpoint_get(workspace=membership.workspace, pk=pk)
    if endpoint is None:
        raise Http404("No such model in this workspace.")
    return endpoint


def _fields(form: ModelEndpointForm) -> EndpointFields:
    data = form.cleaned_data
    return EndpointFields(
        name=data["name"],
        base_url=data["base_url"],
        model=data["model"],
        api_key=data["api_key"] or "",
        extra_body=data["extra_body"] or "",
        temperature=data["temperature"],
        max_tokens=data["max_tokens"],
    )


@login_required
def endpoints_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    endpoints = [
        (endpoint, public_url(endpoint.base_url)) for endpoint in workspace_endpoints(workspace=membership.workspace)
    ]
    context = {"workspace": membership.workspace, "membership": membership, "endpoints": endpoints}
    return render(request, "workspaces/endpoints.html", context)


def _render_form(
    request: HttpRequest, membership: Membership, form: ModelEndpointForm, endpoint: ModelEndpoint | None
) -> HttpResponse:
    context: dict[str, Any] = {
        "workspace": membership.workspace,
        "membership": membership,
        "form": form,
        "endpoint": endpoint,
        # A key typed with a mistake elsewhere is not sent back in the page; say so.
        "key_dropped": form.is_bound and bool(form.data.get("api_key")) and bool(form.errors),
    }
    return render(request, "workspaces/endpoint_form.html", context, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def endpoint_new(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _manager_or_403(slug, request)
    form = ModelEndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            endpoint = endpoint_create(workspace=membership.workspace, actor=request.user, fields=_fields(form))  # type: ignore[arg-type]
        except WorkspaceRuleError as error:
            form.add_error(error.field, str(error))
        else:
            messages.success(request, f"{endpoint.name} was added. Test the connection to see that it works.")
            return redirect("workspace_endpoints", slug=slug)
    return _render_form(request, membership, form, None)


@login_required
@require_http_methods(["GET", "POST"])
def endpoint_edit(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = _manager_or_403(slug, request)
    endpoint = _endpoint_or_404(membership, pk)
    initial = {
        "name": endpoint.name,
        "base_url": endpoint.base_url,
        "model": endpoint.model,
        "extra_body": json.dumps(endpoint.extra_body, indent=2, ensure_ascii=False) if endpoint.extra_body else "",
        "temperature": endpoint.temperature,
        "max_tokens": endpoint.max_tokens,
    }
    form = ModelEndpointForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            endpoint_update(endpoint=endpoint, actor=request.user, fields=_fields(form))  # type: ignore[arg-type]
        except WorkspaceRuleError as error:
            form.add_error(error.field, str(error))
        else:
            messages.success(request, f"{endpoint.name} was saved.")
            return redirect("workspace_endpoints", slug=slug)
    return _render_form(request, membership, form, endpoint)


def _act_on_endpoint(
    request: HttpRequest, slug: str, pk: int, act: Callable[[ModelEndpoint, User], tuple[bool, str]]
) -> HttpResponse:
    """A Models page button: run the service, say what happened, back to the list."""
    membership = _manager_or_403(slug, request)
    endpoint = _endpoint_or_404(membership, pk)
    try:
        succeeded, said = act(endpoint, request.user)  # type: ignore[arg-type]
    except WorkspaceRuleError as error:
        messages.error(request, str(error))
    else:
        (messages.success if succeeded else messages.error)(request, said)
    return redirect("workspace_endpoints", slug=slug)


@login_required
@require_POST
def endpoint_test_view(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    def test(endpoint: ModelEndpoint, actor: User) -> tuple[bool, str]:
        verdict = endpoint_test_connection(endpoint=endpoint, actor=actor)
        return verdict.works, f"{endpoint.name}: {verdict.message}"

    return _act_on_endpoint(request, slug, pk, test)


@login_required
@require_POST
def endpoint_enabled_view(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    enabled = request.POST.get("enabled") == "1"

    def switch(endpoint: ModelEndpoint, actor: User) -> tuple[bool, str]:
        endpoint_set_enabled(endpoint=endpoint, actor=actor, enabled=enabled)
        now = "is back in the model picker" if enabled else "is switched off: it left the model picker"
        return True, f"{endpoint.name} {now}."

    return _act_on_endpoint(request, slug, pk, switch)


@login_required
@require_POST
def endpoint_delete_view(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    def delete(endpoint: ModelEndpoint, actor: User) -> tuple[bool, str]:
        endpoint_delete(endpoint=endpoint, actor=actor)
        return True, f"{endpoint.name} was deleted, and its key with it."

    return _act_on_endpoint(request, slug, pk, delete)
