"""Writes for share links: make one (its address shown once), revoke one, count a visit.

Who may is asked of workspaces.permissions through creations.sharing.access, here and not only
in the pages: the API and the pages call these same functions.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from creations.models import Creation, Run
from creations.sharing.access import may_share_creation
from creations.sharing.models import ShareLink
from creations.sharing.tokens import share_page_url, token_for_retry, token_hash, token_hint, token_new
from workspaces.permissions import REVOKE_SHARE_REFUSED, SHARE_REFUSED, may_revoke_share_link
from workspaces.selectors import membership_get

LABEL_MAX_CHARS = 100
EXPIRY_MAX_DAYS = 365
IDEMPOTENCY_KEY_MAX_CHARS = 255


@dataclass(frozen=True)
class NewShareLink:
    link: ShareLink
    url: str | None  # the link itself: shown now, never stored (None: a replay the server cannot repeat)
    token: str | None
    replayed: bool = False  # the Idempotency-Key was seen before: this is the link its first request made


def _checked(*, creation: Creation, run: Run | None, expires_in_days: int | None, label: str) -> str:
    errors = {}
    label = (label or "").strip()
    if len(label) > LABEL_MAX_CHARS:
        errors["label"] = f"The label is too long (at most {LABEL_MAX_CHARS} characters)."
    if run is not None and run.creation_id != creation.pk:
        errors["run"] = "That version is not one of this creation's."
    if expires_in_days is not None and not 1 <= expires_in_days <= EXPIRY_MAX_DAYS:
        errors["expires_in_days"] = f"A link lasts from 1 to {EXPIRY_MAX_DAYS} days, or until it is revoked."
    if errors:
        raise ValidationError(errors)
    return label


def _fingerprint(*, creation: Creation, run: Run | None, expires_in_days: int | None, label: str) -> str:
    asked = {"creation": creation.pk, "run": run.pk if run else None, "days": expires_in_days, "label": label}
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()


def share_link_create(
    *,
    creation: Creation,
    user: User,
    run: Run | None = None,
    expires_in_days: int | None = None,
    label: str = "",
    idempotency_key: str | None = None,
) -> NewShareLink:
    """A link showing `creation` to anyone who has it: `run`'s version pinned, or (None) whichever
    version the creation shows. With an `idempotency_key`, the same request again answers the
    link the first one made (`replayed`), and the same key for another request is refused."""
    membership = membership_get(workspace=creation.workspace_id, user=user)
    if not may_share_creation(creation=creation, user=user, membership=membership):
        raise PermissionDenied(SHARE_REFUSED)
    label = _checked(creation=creation, run=run, expires_in_days=expires_in_days, label=label)
    expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
    fields = {"workspace_id": creation.workspace_id, "creation": creation, "run": run, "label": label}
    if idempotency_key is None:
        token = token_new()
        link = ShareLink.objects.create(
            **fields, token_hash=token_hash(token), token_hint=token_hint(token), created_by=user, expires_at=expires_at
        )
        return NewShareLink(link=link, url=share_page_url(token), token=token)
    key = idempotency_key.strip()
    if not key or len(key) > IDEMPOTENCY_KEY_MAX_CHARS:
        raise ValidationError(
            {"Idempotency-Key": f"Send 1 to {IDEMPOTENCY_KEY_MAX_CHARS} characters, e.g. a fresh UUID."}
        )
    fingerprint = _fingerprint(creation=creation, run=run, expires_in_days=expires_in_days, label=label)
    token = token_for_retry(user_id=user.pk, key=key, fingerprint=fingerprint)
    with transaction.atomic():
        # One keyed request of this person at a time: two copies sent at once make one link.
        User.objects.select_for_update().filter(pk=user.pk).first()
        seen = ShareLink.objects.filter(created_by=user, idempotency_key=key).first()
        if seen is not None:
            if seen.request_fingerprint != fingerprint:
                raise ValidationError(
                    {"Idempotency-Key": "This key was used for a different request; send a new key for a new link."}
                )
            # A link made before the server's secret changed cannot be shown again: it is listed still.
            repeatable = seen.token_hash == token_hash(token)
            return NewShareLink(
                link=seen,
                url=share_page_url(token) if repeatable else None,
                token=token if repeatable else None,
                replayed=True,
            )
        link = ShareLink.objects.create(
            **fields,
            token_hash=token_hash(token),
            token_hint=token_hint(token),
            created_by=user,
            expires_at=expires_at,
            idempotency_key=key,
            request_fingerprint=fingerprint,
        )
    return NewShareLink(link=link, url=share_page_url(token), token=token)


def share_link_revoke(*, link: ShareLink, user: User) -> ShareLink:
    """Turn the link off at once (its next request answers 410 Gone); revoking it again changes nothing."""
    membership = membership_get(workspace=link.workspace_id, user=user)
    if not may_revoke_share_link(membership, made_by_id=link.created_by_id, user=user):
        raise PermissionDenied(REVOKE_SHARE_REFUSED)
    ShareLink.objects.filter(pk=link.pk, revoked_at__isnull=True).update(revoked_at=timezone.now(), revoked_by=user)
    link.refresh_from_db(fields=["revoked_at", "revoked_by"])
    return link


def share_link_note_view(link: ShareLink) -> None:
    """One more visit of the link's page (or of one of its embeds), counted in the database."""
    ShareLink.objects.filter(pk=link.pk).update(view_count=F("view_count") + 1, last_viewed_at=timezone.now())
