"""The platform's pages for share links: a creation's share dialog (make a link, see its embed
snippet, list and revoke its links) and a workspace's list of links. Thin: parse, call a service,
render. What visitors see is served from the artifact origin (creations/sharing/origin_views.py)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from creations.access import creation_for_viewer_or_404
from creations.models import Creation, Run
from creations.sharing.access import may_share_creation, share_link_for_member_or_404
from creations.sharing.embeds import embed_for
from creations.sharing.forms import SHOWN, ShareLinkForm
from creations.sharing.selectors import share_links_listed, share_links_of_creation, with_statuses
from creations.sharing.services import NewShareLink, share_link_create, share_link_revoke
from creations.sharing.tokens import oembed_url
from creations.sharing.visits import shared_version
from creations.web.csp import with_platform_csp
from workspaces.permissions import SHARE_REFUSED, may_manage_share_links, workspace_membership_or_404


def _signed_in(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _add_service_errors(form: ShareLinkForm, error: ValidationError) -> None:
    if hasattr(error, "error_dict"):
        for field, errors in error.error_dict.items():
            target = {"run": "version"}.get(field, field)
            form.add_error(target if target in form.fields else None, errors)
    else:
        form.add_error(None, error)


def _made(created: NewShareLink) -> dict[str, object]:
    """What the dialog shows once after making a link: the link, and an embed snippet for each file."""
    assert created.token is not None
    assert created.url is not None
    shared = shared_version(created.token)
    return {
        "link": created.link,
        "url": created.url,
        "oembed_url": oembed_url(created.url),
        "version": shared.run,
        "embeds": [embed_for(shared, artifact) for artifact in shared.artifacts()],
    }


@login_required
@with_platform_csp
@require_http_methods(["GET", "POST"])
def creation_share(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = creation_for_viewer_or_404(
        pk=pk,
        user=request.user,
        queryset=Creation.objects.select_related("workspace").prefetch_related(
            Prefetch("runs", queryset=Run.objects.order_by("-version"))
        ),
    )
    creation, membership = viewing.creation, viewing.membership
    runs = list(creation.runs.all())
    pinned = request.GET.get("run", "")
    initial = {"version": pinned if any(str(run.pk) == pinned for run in runs) else SHOWN}
    form = ShareLinkForm(request.POST or None, runs=runs, initial=initial)
    allowed = may_share_creation(creation=creation, user=request.user, membership=membership)
    made = None
    status = 200 if allowed else 403
    if allowed and request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                created = share_link_create(
                    creation=creation,
                    user=_signed_in(request),
                    run=form.pinned_run(),
                    expires_in_days=form.cleaned_data["expires_in_days"],
                    label=form.cleaned_data["label"],
                )
            except ValidationError as error:
                _add_service_errors(form, error)
            else:
                made, status = _made(created), 200
                form = ShareLinkForm(runs=runs, initial=initial)
    links = (
        with_statuses(share_links_of_creation(creation=creation, membership=membership, user=request.user))
        if membership is not None
        else []
    )
    context = {
        "creation": creation,
        "workspace": creation.workspace if viewing.is_member else None,
        "can_create": viewing.can_create,
        "allowed": allowed,
        "refusal": SHARE_REFUSED,
        "form": form,
        "made": made,
        "links": links,
        "sees_all": may_manage_share_links(membership),
    }
    return render(request, "sharing/creation_share.html", context, status=status)


@login_required
@with_platform_csp
@require_GET
def workspace_share_links(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    context = {
        "workspace": membership.workspace,
        "membership": membership,
        "links": with_statuses(share_links_listed(membership=membership, user=request.user)),
        "sees_all": may_manage_share_links(membership),
    }
    return render(request, "sharing/workspace_share_links.html", context)


@login_required
@require_POST
def share_link_revoke_view(request: HttpRequest, pk: int) -> HttpResponse:
    link = share_link_for_member_or_404(pk=pk, user=request.user).link
    share_link_revoke(link=link, user=_signed_in(request))  # PermissionDenied: the 403 page says why
    messages.success(request, f"The link …{link.token_hint} is off: from now on it says the work is gone.")
    back = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return redirect(back)
    return redirect("workspace_share_links", slug=link.creation.workspace.slug)
