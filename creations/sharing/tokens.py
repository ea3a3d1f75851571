"""A share link's token and the addresses built on it.

The token is 32 random bytes in the link; the database keeps its SHA-256 only (as it keeps
invitations' and access tokens'), so a database dump shows nobody anything. A link made with
an API client's Idempotency-Key gets a token derived from that key and the request with the
server's secret instead: a retry then answers the same link, although the link is never stored.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from urllib.parse import quote, urlencode

from django.conf import settings
from django.utils.crypto import salted_hmac

_RETRY_SALT = "atelier.share-link.idempotent"
# What a token looks like in a URL (43 characters of URL-safe base64): anything else is not looked up.
TOKEN_CHARS = 43
HINT_CHARS = 4


def token_new() -> str:
    return secrets.token_urlsafe(32)


def token_for_retry(*, user_id: int, key: str, fingerprint: str) -> str:
    """The token of the link a request with this Idempotency-Key makes, the same for each retry
    of it (the fingerprint covers the creation and everything asked), unguessable without the
    server's secret."""
    digest = salted_hmac(_RETRY_SALT, f"{user_id}:{key}:{fingerprint}", algorithm="sha256").digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_hint(token: str) -> str:
    return token[-HINT_CHARS:]


def looks_like_a_token(token: str) -> bool:
    return len(token) == TOKEN_CHARS and all(c.isascii() and (c.isalnum() or c in "-_") for c in token)


# The artifact origin's routes for share links (creations/sharing/origin_urls.py), as absolute URLs.


def share_page_url(token: str) -> str:
    return f"{settings.ARTIFACT_ORIGIN}/s/{token}/"


def share_embed_url(token: str, artifact_id: int) -> str:
    return f"{settings.ARTIFACT_ORIGIN}/s/{token}/embed/{artifact_id}/"


def share_file_url(token: str, path: str, *, variant: str = "file", download: bool = False) -> str:
    query = {**({"v": variant} if variant != "file" else {}), **({"dl": "1"} if download else {})}
    suffix = f"?{urlencode(query)}" if query else ""
    return f"{settings.ARTIFACT_ORIGIN}/s/{token}/f/{quote(path)}{suffix}"


def oembed_url(url: str) -> str:
    return f"{settings.ARTIFACT_ORIGIN}/oembed?{urlencode({'url': url, 'format': 'json'})}"
