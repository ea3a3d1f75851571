"""Artifacts attached to the new-creation form ("Use in a new creation"): the ones the page
lists, a way to remove each, and the other workspaces the person could start in instead.

They travel as `?artifact=<id>` (a link from an artifact) and then as hidden `artifacts`
fields of the form. The page only shows them; the run service decides whether they may
be taken (creations.runs.artifact_inputs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.http import HttpRequest
from django.urls import reverse

from creations.models import Artifact
from creations.runs.artifact_inputs import artifacts_visible_to
from workspaces.models import Workspace
from workspaces.selectors import workspaces_where_user_creates

# More than any workspace's input limit allows; beyond it a link is not worth reading.
MAX_ATTACHMENTS = 100


@dataclass(frozen=True)
class Attachment:
    artifact: Artifact
    remove_url: str  # this form without it: how a browser without JavaScript removes it


@dataclass(frozen=True)
class Attachments:
    ids: list[int] = field(default_factory=list)  # as asked for: the service answers for each
    items: list[Attachment] = field(default_factory=list)  # those the person may see, in order
    missing: bool = False  # some asked for are gone, hidden from the person, or not ids at all
    query: str = ""  # "artifact=4&artifact=9": the same attachments on another workspace's form
    other_workspaces: list[Workspace] = field(default_factory=list)


def creation_new_url(workspace: Workspace, artifact_ids: list[int]) -> str:
    url = reverse("creation_new", args=[workspace.slug])
    return f"{url}?{_query(artifact_ids)}" if artifact_ids else url


def _query(artifact_ids: list[int]) -> str:
    return urlencode([("artifact", pk) for pk in artifact_ids])


def _requested(request: HttpRequest) -> tuple[list[int], bool]:
    raw = request.POST.getlist("artifacts") if request.method == "POST" else request.GET.getlist("artifact")
    ids: list[int] = []
    malformed = False
    for value in raw[:MAX_ATTACHMENTS]:
        try:
            pk = int(value)
        except ValueError:
            malformed = True
            continue
        if pk <= 0:
            malformed = True
        elif pk not in ids:
            ids.append(pk)
    return ids, malformed


def attachments_for(request: HttpRequest, *, workspace: Workspace) -> Attachments:
    ids, malformed = _requested(request)
    if not ids:
        return Attachments(missing=malformed)
    visible = artifacts_visible_to(user=request.user, ids=ids)
    shown = [pk for pk in ids if pk in visible]
    items = [
        Attachment(visible[pk], creation_new_url(workspace, [other for other in shown if other != pk])) for pk in shown
    ]
    others = [w for w in workspaces_where_user_creates(user=request.user) if w.pk != workspace.pk]
    return Attachments(
        ids=ids,
        items=items,
        missing=malformed or len(shown) < len(ids),
        query=_query(shown),
        other_workspaces=others,
    )
