from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Field, Schema
from pydantic import ConfigDict, StrictBool, StrictInt

from api.schemas.bodies import RequestBody
from api.schemas.text import StoredText
from creations.sharing.models import ShareLink
from creations.sharing.selectors import listed_status

ShareLinkStateName = Literal["active", "expired", "revoked", "inactive"]


class ShareLinkIn(RequestBody):
    """What a new share link shows, and for how long. Every field has a default, so a body that is not
    an object, or names a field not here (a misspelt `expires_in_days`), is refused rather than read
    as "the defaults"."""

    model_config = ConfigDict(extra="forbid")

    pin: StrictBool = Field(
        default=False,
        description="Show this run's version only; otherwise (the default) the version the creation shows, "
        "which follows a restore",
    )
    expires_in_days: StrictInt | None = Field(default=None, description="1 to 365; null: until revoked")
    label: StoredText = Field(default="", description="Who it is for, to tell your links apart (100 characters)")


class EmbedOut(Schema):
    """One file of the shared version, ready to embed in another site."""

    artifact_id: int
    path: str
    embed_url: str = Field(description="A page of the artifact origin showing this file alone, for an iframe")
    iframe: str = Field(description="The HTML to paste: a sandboxed iframe of embed_url")
    width: int
    height: int


class ShareLinkOut(Schema):
    """A share link, read from a link of `creations.sharing.selectors.share_links_annotated`."""

    id: int
    creation_id: int
    title: str
    workspace: str = Field(description="The workspace's slug")
    run_id: int | None = Field(description="The run whose version is pinned; null: the version the creation shows")
    version: int | None = Field(description="The pinned version's number; null: the version the creation shows")
    label: str
    token_hint: str = Field(description="The link's last characters, to tell it apart (the link itself is not kept)")
    state: ShareLinkStateName = Field(
        description="active; expired; revoked; or inactive: its maker may no longer share this creation"
    )
    problem: str = Field(description="Why it does not work, as its visitors are told; blank when active")
    created_by: str | None = Field(description="Username of who made it (null: their account is gone)")
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    view_count: int = Field(description="Visits of its page and of its embeds")
    last_viewed_at: datetime | None
    url: str | None = Field(
        default=None, description="The link: only in the answer that made it (and its Idempotency-Key replays)"
    )
    oembed_url: str | None = Field(default=None, description="Its oEmbed endpoint's address (with the link)")
    embeds: list[EmbedOut] = Field(default_factory=list, description="With the link: each file's embed")

    @staticmethod
    def resolve_title(link: ShareLink) -> str:
        return link.creation.title

    @staticmethod
    def resolve_workspace(link: ShareLink) -> str:
        return link.creation.workspace.slug

    @staticmethod
    def resolve_version(link: ShareLink) -> int | None:
        return link.run.version if link.run is not None else None

    @staticmethod
    def resolve_state(link: ShareLink) -> str:
        return listed_status(link).state

    @staticmethod
    def resolve_problem(link: ShareLink) -> str:
        return listed_status(link).problem

    @staticmethod
    def resolve_created_by(link: ShareLink) -> str | None:
        return link.created_by.get_username() if link.created_by is not None else None
