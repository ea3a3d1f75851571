"""Writes for workspaces and memberships."""

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.text import slugify

from workspaces.models import Membership, Role, Workspace


def _unique_slug(base: str) -> str:
    root = slugify(base)[:50] or "workspace"
    slug, n = root, 1
    while Workspace.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{root}-{n}"
    return slug


@transaction.atomic
def workspace_create(*, name: str, owner: User, is_personal: bool = False) -> Workspace:
    workspace = Workspace.objects.create(name=name, slug=_unique_slug(name), is_personal=is_personal)
    Membership.objects.create(workspace=workspace, user=owner, role=Role.OWNER)
    return workspace


def workspace_create_personal(*, user: User) -> Workspace:
    username = user.get_username()
    return workspace_create(name=f"{username}'s workspace", owner=user, is_personal=True)


@transaction.atomic
def membership_add(*, workspace: Workspace, user: User, role: str = Role.MEMBER) -> Membership:
    membership, _ = Membership.objects.update_or_create(workspace=workspace, user=user, defaults={"role": role})
    return membership
