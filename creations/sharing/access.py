"""Who may make, see and revoke a creation's share links, and whether a link still works.

The roles' rules are workspaces.permissions' (`may_share`, `may_manage_share_links`,
`may_revoke_share_link`); what a person may see is creations.access'. A link speaks for the
person who made it: it works while they may still share that creation, so a member who leaves
the workspace, or becomes a viewer, or loses sight of a private creation, takes their links with
them (the workspace's list shows those as inactive, and the link answers 410 Gone).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.http import Http404
from django.utils import timezone

from creations.access import creation_visible
from creations.models import Creation
from creations.sharing.models import ShareLink
from workspaces.models import Membership
from workspaces.permissions import may_manage_share_links, may_share
from workspaces.selectors import membership_get

AnyUser = User | AnonymousUser


def may_share_creation(*, creation: Creation, user: AnyUser, membership: Membership | None) -> bool:
    """Those who may share, for what they may see."""
    return may_share(membership) and creation_visible(creation=creation, user=user, membership=membership)


@dataclass(frozen=True)
class LinkStatus:
    state: str  # active, expired, revoked, or inactive (its maker may no longer share it)
    problem: str  # why it does not work, said to whoever opens it; blank when it works

    @property
    def works(self) -> bool:
        return not self.problem


def link_status(link: ShareLink, *, maker_membership: Membership | None) -> LinkStatus:
    """Whether `link` works, `maker_membership` being its maker's membership of its workspace."""
    if link.revoked_at is not None:
        return LinkStatus("revoked", "This link was turned off by the people who shared it.")
    if link.expires_at is not None and link.expires_at <= timezone.now():
        return LinkStatus("expired", f"This link expired on {link.expires_at:%Y-%m-%d at %H:%M} UTC.")
    maker = link.created_by
    if maker is None or not maker.is_active:
        return LinkStatus("inactive", "This link no longer works: the account that shared it is gone.")
    if not may_share_creation(creation=link.creation, user=maker, membership=maker_membership):
        return LinkStatus("inactive", "This link no longer works: whoever shared it may no longer share this work.")
    return LinkStatus("active", "")


def link_status_now(link: ShareLink) -> LinkStatus:
    maker: AnyUser = link.created_by or AnonymousUser()
    return link_status(link, maker_membership=membership_get(workspace=link.workspace_id, user=maker))


@dataclass(frozen=True)
class LinkViewing:
    """A share link someone may see in a list or act on, with their membership of its workspace."""

    link: ShareLink
    membership: Membership | None


def share_link_for_member_or_404(*, pk: int, user: AnyUser) -> LinkViewing:
    """A link the person may at least ask to revoke: one they made, one of a creation they see, or,
    for owners and admins, any link of their workspace. Whether they may really revoke it is
    `may_revoke_share_link`'s answer, in the service. Others are told it does not exist."""
    link = (
        ShareLink.objects.select_related("creation__workspace", "run", "created_by", "revoked_by")
        .filter(pk=pk)
        .first()
    )
    membership = membership_get(workspace=link.workspace_id, user=user) if link is not None else None
    if link is None or membership is None:
        raise Http404("No such share link.")
    made_it = link.created_by_id == user.pk
    sees_creation = creation_visible(creation=link.creation, user=user, membership=membership)
    if not (made_it or sees_creation or may_manage_share_links(membership)):
        raise Http404("No such share link.")
    return LinkViewing(link=link, membership=membership)
