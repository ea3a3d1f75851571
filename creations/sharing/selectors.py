"""Reads for share links: the lists a member sees (their own; owners and admins every link of the
workspace), each link with its maker's role annotated, so whether it still works is known
without a query per link."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import OuterRef, QuerySet, Subquery

from creations.models import Creation
from creations.sharing.access import LinkStatus, link_status
from creations.sharing.models import ShareLink
from workspaces.models import Membership
from workspaces.permissions import may_manage_share_links


def share_links_annotated() -> QuerySet[ShareLink]:
    """Links with what a list shows of them, and `maker_role`: their maker's role in the workspace now."""
    makers_role = Membership.objects.filter(workspace_id=OuterRef("workspace_id"), user_id=OuterRef("created_by_id"))
    return ShareLink.objects.select_related("creation__workspace", "run", "created_by", "revoked_by").annotate(
        maker_role=Subquery(makers_role.values("role")[:1])
    )


def share_links_listed(*, membership: Membership, user: User | AnonymousUser) -> QuerySet[ShareLink]:
    """The workspace's links this member sees, newest first: owners and admins all, the others their own."""
    links = share_links_annotated().filter(workspace_id=membership.workspace_id)
    if may_manage_share_links(membership):
        return links
    return links.filter(created_by_id=user.pk)


def share_links_of_creation(
    *, creation: Creation, membership: Membership, user: User | AnonymousUser
) -> QuerySet[ShareLink]:
    return share_links_listed(membership=membership, user=user).filter(creation=creation)


def listed_status(link: ShareLink) -> LinkStatus:
    """Whether a link of `share_links_annotated` works, from its annotation (no query)."""
    role = getattr(link, "maker_role", None)
    maker = (
        Membership(workspace_id=link.workspace_id, user_id=link.created_by_id, role=role)
        if role is not None and link.created_by_id is not None
        else None
    )
    return link_status(link, maker_membership=maker)


@dataclass(frozen=True)
class ListedLink:
    link: ShareLink
    status: LinkStatus


def with_statuses(links: QuerySet[ShareLink]) -> list[ListedLink]:
    return [ListedLink(link=link, status=listed_status(link)) for link in links]
