"""Writes for workspaces and memberships, with the role rules enforced here (not only in templates).

Owners may do everything, deleting the workspace included; admins manage
members (never owners) and settings; anybody may leave. A workspace always
keeps at least one owner: the last one can neither leave nor be demoted,
and hands over by making someone else an owner first. A refused change
raises `WorkspaceRuleError` with a sentence the person can act on.
"""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from workspaces.models import ROLES_THAT_MANAGE, Membership, Role, Workspace

SLUG_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,58}[a-z0-9])?$")
RESERVED_SLUGS = frozenset({"new", "admin", "api", "settings", "members", "static", "media"})


class WorkspaceRuleError(Exception):
    """A change the rules refuse; str() is what to tell the person."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def _unique_slug(base: str) -> str:
    root = slugify(base)[:50] or "workspace"
    slug, n = root, 1
    while Workspace.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{root}-{n}"
    return slug


def _check_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise WorkspaceRuleError("Give the workspace a name.", field="name")
    if len(name) > 100:
        raise WorkspaceRuleError("A workspace name has at most 100 characters.", field="name")
    return name


def _check_slug(slug: str) -> str:
    slug = slug.strip().lower()
    if not SLUG_PATTERN.match(slug):
        raise WorkspaceRuleError(
            "Use 1 to 60 lowercase letters, digits and hyphens, not starting or ending with a hyphen.", field="slug"
        )
    if slug in RESERVED_SLUGS:
        raise WorkspaceRuleError(f"“{slug}” is reserved; choose another address.", field="slug")
    if Workspace.objects.filter(slug=slug).exists():
        raise WorkspaceRuleError(f"The address “{slug}” is taken; choose another.", field="slug")
    return slug


@transaction.atomic
def workspace_create(*, name: str, owner: User, slug: str = "", is_personal: bool = False) -> Workspace:
    name = _check_name(name)
    slug = _check_slug(slug) if slug else _unique_slug(name)
    try:
        with transaction.atomic():
            workspace = Workspace.objects.create(name=name, slug=slug, is_personal=is_personal)
    except IntegrityError:  # taken between the check and the insert
        raise WorkspaceRuleError(f"The address “{slug}” is taken; choose another.", field="slug") from None
    Membership.objects.create(workspace=workspace, user=owner, role=Role.OWNER)
    return workspace


def workspace_create_personal(*, user: User) -> Workspace:
    username = user.get_username()
    return workspace_create(name=f"{username}'s workspace"[:100], owner=user, is_personal=True)


def _actor_membership(workspace: Workspace, actor: User) -> Membership:
    membership = Membership.objects.filter(workspace=workspace, user=actor).first()
    if membership is None:
        raise WorkspaceRuleError("You are not a member of this workspace.")
    return membership


def require_manager(workspace: Workspace, actor: User) -> Membership:
    membership = _actor_membership(workspace, actor)
    if membership.role not in ROLES_THAT_MANAGE:
        raise WorkspaceRuleError("Only the workspace's owners and admins can do this.")
    return membership


def _owner_count(workspace: Workspace) -> int:
    return Membership.objects.filter(workspace=workspace, role=Role.OWNER).count()


@transaction.atomic
def workspace_rename(*, workspace: Workspace, actor: User, name: str) -> Workspace:
    require_manager(workspace, actor)
    workspace.name = _check_name(name)
    workspace.save(update_fields=["name"])
    return workspace


@transaction.atomic
def workspace_allow_viewers_to_comment(*, workspace: Workspace, actor: User, allowed: bool) -> Workspace:
    """Whether the workspace's viewers may comment on the creations they see (owners and admins decide)."""
    require_manager(workspace, actor)
    workspace.viewers_may_comment = allowed
    workspace.save(update_fields=["viewers_may_comment"])
    return workspace


@transaction.atomic
def workspace_delete(*, workspace: Workspace, actor: User, confirmation: str) -> None:
    """Delete the workspace and everything in it (creations, runs, files in storage, endpoints).
    Stored files go through the models' delete signals, once the transaction commits."""
    if _actor_membership(workspace, actor).role != Role.OWNER:
        raise WorkspaceRuleError("Only an owner can delete the workspace.")
    if workspace.is_personal:
        raise WorkspaceRuleError("Your personal workspace cannot be deleted.")
    if confirmation.strip() != workspace.slug:
        raise WorkspaceRuleError(f"Type the workspace's address, “{workspace.slug}”, to confirm.", field="confirm")
    workspace.delete()


@transaction.atomic
def membership_add(*, workspace: Workspace, user: User, role: str = Role.MEMBER) -> Membership:
    membership, _ = Membership.objects.update_or_create(workspace=workspace, user=user, defaults={"role": role})
    return membership


@transaction.atomic
def membership_change_role(*, membership: Membership, actor: User, role: str) -> Membership:
    if role not in Role.values:
        raise WorkspaceRuleError("Choose one of the roles.", field="role")
    workspace = membership.workspace
    # Rows of this workspace's owners are locked, so two demotions at once cannot leave it without one.
    list(Membership.objects.select_for_update().filter(workspace=workspace, role=Role.OWNER))
    actor_membership = require_manager(workspace, actor)
    touches_owner = membership.role == Role.OWNER or role == Role.OWNER
    if touches_owner and actor_membership.role != Role.OWNER:
        raise WorkspaceRuleError("Only an owner can make someone an owner or change an owner's role.")
    if membership.role == Role.OWNER and role != Role.OWNER and _owner_count(workspace) <= 1:
        raise WorkspaceRuleError("The workspace needs an owner: make someone else an owner first.")
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership, actor: User) -> None:
    workspace = membership.workspace
    list(Membership.objects.select_for_update().filter(workspace=workspace, role=Role.OWNER))
    if membership.user_id == actor.pk:
        return membership_leave(workspace=workspace, user=actor)
    actor_membership = require_manager(workspace, actor)
    if membership.role == Role.OWNER and actor_membership.role != Role.OWNER:
        raise WorkspaceRuleError("Admins cannot remove an owner.")
    if membership.role == Role.OWNER and _owner_count(workspace) <= 1:
        raise WorkspaceRuleError("The workspace needs an owner: make someone else an owner first.")
    membership.delete()
    return None


@transaction.atomic
def membership_leave(*, workspace: Workspace, user: User) -> None:
    list(Membership.objects.select_for_update().filter(workspace=workspace, role=Role.OWNER))
    membership = _actor_membership(workspace, user)
    if workspace.is_personal:
        raise WorkspaceRuleError("You cannot leave your personal workspace.")
    if membership.role == Role.OWNER and _owner_count(workspace) <= 1:
        raise WorkspaceRuleError("You are the last owner: make someone else an owner before you leave.")
    membership.delete()
