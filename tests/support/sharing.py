"""Share links for tests: made as a member makes them, and visited as a stranger would, on the
artifact origin (the Host header says which origin a request is for)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.models import User
from django.test import Client

from creations.models import Creation, Run
from creations.sharing.services import NewShareLink, share_link_create


def share(creation: Creation, user: User, *, run: Run | None = None, **options: Any) -> NewShareLink:
    return share_link_create(creation=creation, user=user, run=run, **options)


def visit(client: Client, url: str, *, method: str = "get", **headers: str) -> Any:
    """GET (or HEAD) an absolute URL through the test client, with its host, as a browser would."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return getattr(client, method)(path, headers={"host": parts.netloc, **headers})


def body(response: Any) -> bytes:
    return b"".join(response) if response.streaming else response.content
