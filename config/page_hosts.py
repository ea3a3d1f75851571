"""The hosts an artifact page may load from (ARTIFACT_PAGE_HOSTS), checked as they go into a CSP.

Each is one origin written exactly, `https://tiles.example.net` or `https://tiles.example.net:8443`:
a CSP source list would also take wildcards, paths and keywords, and each of those widens what a
page written by a model may reach, so none is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

# A DNS name of letters, digits and hyphens in labels (an IP address is such a name too).
_HOST_NAME = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")


def page_host_origins(values: Iterable[str]) -> list[str]:
    """Each value as a normalized origin (lower case, no trailing slash), in order, without repeats;
    ValueError naming the first value that is not one https origin."""
    origins: list[str] = []
    for value in values:
        origin = _origin(value.strip())
        if origin not in origins:
            origins.append(origin)
    return origins


def _origin(value: str) -> str:
    example = "e.g. https://tile.openstreetmap.org"
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise ValueError(f"{value!r} is not an origin ({example})") from None
    if parts.scheme != "https":
        raise ValueError(f"{value!r}: only https origins may be listed ({example})")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{value!r}: list the origin alone, without a path, query or user ({example})")
    host = (parts.hostname or "").lower()
    if not _HOST_NAME.match(host):
        raise ValueError(f"{value!r}: the host must be a name written out in full, with no wildcard ({example})")
    return f"https://{host}:{port}" if port and port != 443 else f"https://{host}"
