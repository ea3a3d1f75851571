"""What a visitor with a share link sees: the link's version of its creation, and its files.

No account and no session: the token in the URL is the visitor's only key, looked up by its
hash on every request, so a revoked or expired link stops at once (410 Gone) and a link never
reaches another creation's files: the version, and so the run whose files are served, comes from
the link, never from the URL.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import Http404

from creations.models import Artifact, Creation, Run
from creations.sharing.access import link_status_now
from creations.sharing.models import ShareLink
from creations.sharing.tokens import looks_like_a_token, token_hash

NO_SUCH_LINK = "No such link. Ask whoever sent it for a new one."


class ShareLinkGone(Exception):
    """A link that existed and works no more (revoked, expired, its maker's right gone); str() says which."""


@dataclass(frozen=True)
class SharedVersion:
    token: str
    link: ShareLink
    run: Run | None  # None: the creation has no version yet

    @property
    def creation(self) -> Creation:
        return self.link.creation

    @property
    def title(self) -> str:
        return self.creation.title or "Untitled creation"

    def artifacts(self) -> list[Artifact]:
        return list(self.run.artifacts.order_by("path")) if self.run is not None else []

    def artifact(self, *, pk: int | None = None, path: str | None = None) -> Artifact:
        """One file of the link's version, by id or path; Http404 for anything else (another version's,
        another creation's)."""
        found = None
        if self.run is not None:
            lookup = {"pk": pk} if pk is not None else {"path": path}
            found = Artifact.objects.filter(run=self.run, **lookup).select_related("run__creation").first()
        if found is None:
            raise Http404("This link shows no such file.")
        return found


def _version(link: ShareLink) -> Run | None:
    """The pinned version, else the one the creation shows, else (none has ended yet) its latest."""
    if link.run is not None:
        return link.run
    if link.creation.shown_run is not None:
        return link.creation.shown_run
    return Run.objects.filter(creation_id=link.creation_id).select_related("started_by").order_by("-version").first()


def shared_version(token: str) -> SharedVersion:
    """The version a token shows; Http404 for a token that never was, ShareLinkGone for one that was."""
    link = None
    if looks_like_a_token(token):
        link = (
            ShareLink.objects.select_related("creation__shown_run__started_by", "run__started_by", "created_by")
            .filter(token_hash=token_hash(token))
            .first()
        )
    if link is None:
        raise Http404(NO_SUCH_LINK)
    status = link_status_now(link)
    if not status.works:
        raise ShareLinkGone(status.problem)
    return SharedVersion(token=token, link=link, run=_version(link))
