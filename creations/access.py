"""Who may see a creation, its runs and its artifacts: the one permission check.

Members of the creation's workspace see it, except another member's private
creation; anyone sees a public one. Every page, download, websocket and
artifact URL asks here, so a rule changes in one place. Outsiders get a 404,
never a hint that the object exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q, QuerySet
from django.http import Http404

from creations.models import Artifact, Creation, Run, Visibility
from workspaces.models import Membership
from workspaces.permissions import may_start_runs
from workspaces.selectors import membership_get

AnyUser = User | AnonymousUser


def creation_visible(*, creation: Creation, user: AnyUser, membership: Membership | None) -> bool:
    """The rule itself, for a membership the caller already has (None: not a member)."""
    if creation.visibility == Visibility.PUBLIC:
        return True
    if membership is None:
        return False
    if creation.visibility == Visibility.PRIVATE:
        return creation.author_id == user.pk
    return True


def visible_to_member(user: AnyUser, *, creation: str = "") -> Q:
    """`creation_visible` as a filter, for someone who is a member of the workspaces
    being filtered: everything but other people's private creations. `creation` is
    the path from the filtered model to its creation ("run__creation__")."""
    return ~Q(**{f"{creation}visibility": Visibility.PRIVATE}) | Q(**{f"{creation}author_id": user.pk})


def can_cancel_run(*, run: Run, user: AnyUser, membership: Membership | None) -> bool:
    """Members cancel the runs they started; owners and admins any run of their workspace
    (a private creation's too: stopping it shows them nothing of it)."""
    if membership is None or not may_start_runs(membership):
        return False
    if membership.can_manage:
        return True
    return run.started_by_id == user.pk and creation_visible(creation=run.creation, user=user, membership=membership)


def can_delete_creation(*, creation: Creation, user: AnyUser, membership: Membership | None) -> bool:
    """Authors delete their own creations; owners and admins any creation of their workspace
    (a private one's too: its storage counts against the workspace's quota). Viewers delete
    nothing, not even what they made before they became viewers."""
    if membership is None or not may_start_runs(membership):
        return False
    return membership.can_manage or creation.author_id == user.pk


def can_view_creation(*, creation: Creation, user: AnyUser) -> bool:
    membership = membership_get(workspace=creation.workspace_id, user=user)
    return creation_visible(creation=creation, user=user, membership=membership)


def may_still_watch_run(*, run_id: int, user_id: int | None) -> bool:
    """Whether someone watching a run live (None: signed out) may still see it, read afresh:
    the person still active, their membership and the creation's visibility as they are now."""
    run = Run.objects.select_related("creation").filter(pk=run_id).first()
    if run is None:
        return False
    viewer: AnyUser = AnonymousUser()
    if user_id is not None:
        found = User.objects.filter(pk=user_id, is_active=True).first()
        if found is None:
            return False
        viewer = found
    return can_view_creation(creation=run.creation, user=viewer)


@dataclass(frozen=True)
class Viewing:
    """An object a viewer may see, with the viewer's membership of its workspace (fetched once)."""

    membership: Membership | None

    @property
    def is_member(self) -> bool:
        return self.membership is not None

    @property
    def can_create(self) -> bool:
        return may_start_runs(self.membership)


@dataclass(frozen=True)
class CreationViewing(Viewing):
    creation: Creation


@dataclass(frozen=True)
class RunViewing(Viewing):
    run: Run


@dataclass(frozen=True)
class ArtifactViewing(Viewing):
    artifact: Artifact


def _membership_if_visible(creation: Creation, user: AnyUser) -> Membership | None:
    membership = membership_get(workspace=creation.workspace_id, user=user)
    if not creation_visible(creation=creation, user=user, membership=membership):
        raise Http404("No such creation.")
    return membership


def creation_for_viewer_or_404(
    *, pk: int, user: AnyUser, queryset: QuerySet[Creation] | None = None
) -> CreationViewing:
    creation = (
        (queryset if queryset is not None else Creation.objects.select_related("workspace")).filter(pk=pk).first()
    )
    if creation is None:
        raise Http404("No such creation.")
    return CreationViewing(creation=creation, membership=_membership_if_visible(creation, user))


def run_for_viewer_or_404(*, pk: int, user: AnyUser, queryset: QuerySet[Run] | None = None) -> RunViewing:
    run = (
        (queryset if queryset is not None else Run.objects.select_related("creation__workspace")).filter(pk=pk).first()
    )
    if run is None:
        raise Http404("No such run.")
    return RunViewing(run=run, membership=_membership_if_visible(run.creation, user))


def run_to_cancel_or_404(*, pk: int, user: AnyUser) -> RunViewing:
    """A run the person may at least ask to stop: one they can see, or, for the
    workspace's owners and admins, any of its runs, a private creation's too.
    Whether they may really cancel it is `can_cancel_run`'s answer, in the service."""
    run = Run.objects.select_related("creation__workspace").filter(pk=pk).first()
    if run is None:
        raise Http404("No such run.")
    membership = membership_get(workspace=run.creation.workspace_id, user=user)
    manages = membership is not None and membership.can_manage
    if not manages and not creation_visible(creation=run.creation, user=user, membership=membership):
        raise Http404("No such run.")
    return RunViewing(run=run, membership=membership)


def creation_to_delete_or_404(*, pk: int, user: AnyUser) -> CreationViewing:
    """A creation the person may at least ask to delete: one they can see, or, for the
    workspace's owners and admins, any of its creations, a private one too. Whether
    they may really delete it is `can_delete_creation`'s answer, in the service."""
    creation = Creation.objects.select_related("workspace").filter(pk=pk).first()
    if creation is None:
        raise Http404("No such creation.")
    membership = membership_get(workspace=creation.workspace_id, user=user)
    manages = membership is not None and membership.can_manage
    if not manages and not creation_visible(creation=creation, user=user, membership=membership):
        raise Http404("No such creation.")
    return CreationViewing(creation=creation, membership=membership)


def artifact_for_viewer_or_404(
    *, pk: int, user: AnyUser, queryset: QuerySet[Artifact] | None = None
) -> ArtifactViewing:
    queryset = queryset if queryset is not None else Artifact.objects.select_related("run__creation__workspace")
    artifact = queryset.filter(pk=pk).first()
    if artifact is None:
        raise Http404("No such artifact.")
    return ArtifactViewing(artifact=artifact, membership=_membership_if_visible(artifact.run.creation, user))
