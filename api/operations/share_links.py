"""Share links: make one for a run's creation (with an Idempotency-Key), list them (a creation's,
a workspace's), and revoke one.

Who may do what is creations.sharing's answer (its services and access checks), after the same
visibility check as every run operation (creations.access).
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Header, Router, Status
from ninja.pagination import CursorPagination, paginate

from api.auth import WRITE, caller
from api.operations.runs import RUN_QUERYSET
from api.schemas.share_links import EmbedOut, ShareLinkIn, ShareLinkOut
from creations.access import run_for_viewer_or_404
from creations.sharing.access import share_link_for_member_or_404
from creations.sharing.embeds import embed_for
from creations.sharing.models import ShareLink
from creations.sharing.selectors import share_links_annotated, share_links_listed
from creations.sharing.services import NewShareLink, share_link_create, share_link_revoke
from creations.sharing.tokens import oembed_url
from creations.sharing.visits import shared_version
from workspaces.permissions import workspace_membership_or_404

router = Router(tags=["share links"])
workspace_router = Router(tags=["share links"])
link_router = Router(tags=["share links"])


def share_link_out(link: ShareLink, made: NewShareLink | None = None) -> ShareLinkOut:
    """A link of `share_links_annotated` as the API shows it; with `made`, its address and embeds too."""
    out = ShareLinkOut.from_orm(link)
    if made is None or made.url is None or made.token is None:
        return out
    out.url, out.oembed_url = made.url, oembed_url(made.url)
    if out.state == "active":
        shared = shared_version(made.token)
        out.embeds = [
            EmbedOut(
                artifact_id=embed.artifact.pk,
                path=embed.artifact.path,
                embed_url=embed.url,
                iframe=embed.snippet,
                width=embed.width,
                height=embed.height,
            )
            for embed in (embed_for(shared, artifact) for artifact in shared.artifacts())
        ]
    return out


@router.post(
    "/{run_id}/share-links",
    auth=WRITE,
    response={200: ShareLinkOut, 201: ShareLinkOut},
    summary="Share a run's creation with a link",
    description=(
        "Makes a link that shows the creation's files, read-only, to anyone who has it (no account): the "
        "version the creation shows, or with `pin` this run's version only. The answer carries the link "
        "(`url`) and each file's iframe snippet: they are shown this once, and only a hash of the link is kept. "
        "Owners, admins and members may share what they may see; viewers may not (403). Send an "
        "`Idempotency-Key` header (a fresh UUID) to retry safely: the same key and body answer 200 with the "
        "link already made."
    ),
)
def create_share_link(
    request: HttpRequest,
    response: HttpResponse,
    run_id: int,
    payload: ShareLinkIn,
    idempotency_key: str | None = Header(None, alias="Idempotency-Key"),
) -> Status[ShareLinkOut]:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET).run
    made = share_link_create(
        creation=run.creation,
        user=user,
        run=run if payload.pin else None,
        expires_in_days=payload.expires_in_days,
        label=payload.label,
        idempotency_key=idempotency_key,
    )
    out = share_link_out(share_links_annotated().get(pk=made.link.pk), made)
    if made.replayed:
        response["Idempotent-Replayed"] = "true"
        return Status(200, out)
    return Status(201, out)


@router.get(
    "/{run_id}/share-links",
    response=list[ShareLinkOut],
    summary="The share links of a run's creation",
    description="Those you made; owners and admins see everyone's. Newest first.",
)
def list_share_links(request: HttpRequest, run_id: int) -> list[ShareLink]:
    user = caller(request)
    viewing = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET)
    if viewing.membership is None:  # a public creation of another workspace: no link there is yours
        return []
    return list(
        share_links_listed(membership=viewing.membership, user=user).filter(creation_id=viewing.run.creation_id)
    )


@workspace_router.get(
    "/{slug}/share-links",
    response=list[ShareLinkOut],
    summary="A workspace's share links",
    description="Those you made; owners and admins see every link of the workspace. Newest first, in pages.",
)
@paginate(CursorPagination, ordering=("-id",))
def list_workspace_share_links(request: HttpRequest, slug: str) -> QuerySet[ShareLink]:
    user = caller(request)
    membership = workspace_membership_or_404(slug=slug, user=user)
    return share_links_listed(membership=membership, user=user)


@link_router.post(
    "/{share_link_id}/revoke",
    auth=WRITE,
    response=ShareLinkOut,
    summary="Turn a share link off",
    description=(
        "From the next request on, the link and its embeds answer 410 Gone. Revoking it again changes nothing. "
        "You may revoke the links you made; owners and admins any link of their workspace."
    ),
)
def revoke_share_link(request: HttpRequest, share_link_id: int) -> ShareLinkOut:
    user = caller(request)
    link = share_link_for_member_or_404(pk=share_link_id, user=user).link
    share_link_revoke(link=link, user=user)
    return share_link_out(share_links_annotated().get(pk=link.pk))
