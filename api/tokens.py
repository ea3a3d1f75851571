"""Personal access tokens: made (the secret shown once), revoked, and checked on each request.

A token reads `atl_<lookup>_<secret>`. The lookup finds the row; the secret is
compared as a SHA-256 hash in constant time. A slow password hash would add
nothing: the secret is 256 random bits, not something a person chose. One
person holds at most `API_TOKENS_MAX_PER_PERSON` that still work.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from api.models import PersonalAccessToken, TokenScope

TOKEN_PATTERN = re.compile(r"atl_([0-9a-f]{8})_([0-9a-f]{64})")
NAME_MAX_CHARS = 100
EXPIRY_MAX_DAYS = 366
# How stale `last_used_at` may be: one write a minute per token, not one per request.
LAST_USED_PRECISION = timedelta(minutes=1)


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class NewToken:
    token: PersonalAccessToken
    raw: str  # shown to the person once, never stored


def token_create(*, user: User, name: str, scope: str, expires_in_days: int | None) -> NewToken:
    name = (name or "").strip()
    errors = {}
    if not name:
        errors["name"] = "Name the token after where it will be used, say “laptop” or “nightly reports”."
    elif len(name) > NAME_MAX_CHARS:
        errors["name"] = f"The name is too long (at most {NAME_MAX_CHARS} characters)."
    if scope not in TokenScope.values:
        errors["scope"] = "Choose read, or read and write."
    if expires_in_days is not None and not 1 <= expires_in_days <= EXPIRY_MAX_DAYS:
        errors["expires_in_days"] = f"A token lasts from 1 to {EXPIRY_MAX_DAYS} days, or until revoked."
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        # One at a time per person (a lock on their row), so tokens made at once cannot pass the most together.
        User.objects.select_for_update().filter(pk=user.pk).first()
        held = tokens_of(user=user).count()
        if held >= settings.API_TOKENS_MAX_PER_PERSON:
            raise ValidationError(
                {
                    NON_FIELD_ERRORS: f"You have {held} access tokens, the most one person may have"
                    f" ({settings.API_TOKENS_MAX_PER_PERSON}). Revoke one you no longer use, then make this one."
                }
            )
        while True:
            lookup = secrets.token_hex(4)
            if not PersonalAccessToken.objects.filter(lookup=lookup).exists():
                break
        raw = f"atl_{lookup}_{secrets.token_hex(32)}"
        expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
        token = PersonalAccessToken.objects.create(
            user=user, name=name, lookup=lookup, secret_hash=_hash(raw), scope=scope, expires_at=expires_at
        )
    return NewToken(token=token, raw=raw)


def token_revoke(*, user: User, pk: int) -> PersonalAccessToken | None:
    """Revoke one of the person's own tokens; None when they have no such token."""
    token = PersonalAccessToken.objects.filter(user=user, pk=pk).first()
    if token is None:
        return None
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def tokens_of(*, user: User) -> QuerySet[PersonalAccessToken]:
    """The person's tokens that still work, newest first."""
    now = timezone.now()
    return PersonalAccessToken.objects.filter(user=user, revoked_at__isnull=True).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    )


@dataclass(frozen=True)
class TokenCheck:
    token: PersonalAccessToken | None
    refusal: str = ""  # why a token that exists does not work, said to its holder
    # No token was ever made with this secret: a typo, or someone guessing (counted per address,
    # api/throttling.py). A revoked or expired token is a real one, and not counted.
    unknown: bool = False


def token_authenticate(raw: str) -> TokenCheck:
    """The token this string is, if it works; otherwise why not."""
    match = TOKEN_PATTERN.fullmatch(raw.strip())
    token = None
    if match is not None:
        # get(), not first(): the lookup is unique, and first()'s ORDER BY costs the ORM more CPU
        # than the database's answer, on every API request.
        with contextlib.suppress(PersonalAccessToken.DoesNotExist):
            token = PersonalAccessToken.objects.select_related("user").get(lookup=match.group(1))
    if token is None or not hmac.compare_digest(token.secret_hash, _hash(match.group(0) if match else raw)):
        return TokenCheck(None, "The token is not valid. Create one on your Access tokens page.", unknown=True)
    if token.revoked_at is not None:
        return TokenCheck(None, "This token was revoked. Create a new one on your Access tokens page.")
    if token.is_expired:
        return TokenCheck(None, "This token has expired. Create a new one on your Access tokens page.")
    if not token.user.is_active:
        return TokenCheck(None, "The account this token belongs to is disabled.")
    _note_use(token)
    return TokenCheck(token)


def _note_use(token: PersonalAccessToken) -> None:
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_PRECISION:
        return
    PersonalAccessToken.objects.filter(pk=token.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_PRECISION)
    ).update(last_used_at=now)
    token.last_used_at = now
