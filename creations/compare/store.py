"""Where the details of comparisons are kept: in storage, by the two files' sha256.

Two files with the same pair of checksums compare the same whatever run or
creation they belong to, so a comparison is made once and every later look (any
page, the API, another process or host) reads it back. The web and worker
processes share storage, not their caches: storage is where a detail lives; the
local cache only spares a second read of it in the same process.
"""

from __future__ import annotations

import logging

from django.core.cache import cache
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from pydantic import ValidationError

from creations.artifacts.origin import DERIVED_PREFIX
from creations.compare.results import Detail, Plan

logger = logging.getLogger(__name__)

# Bumped when the differ's answers change meaning, so old details are not read as new ones.
VERSION = 1
PREFIX = f"{DERIVED_PREFIX}comparisons"  # overlays are served from the artifact origin (creations.artifacts.origin)
CACHE_SECONDS = 3600
MAX_DETAIL_BYTES = 1024 * 1024


def detail_name(*, sha_a: str, sha_b: str, plan: Plan) -> str:
    return f"{PREFIX}/v{VERSION}/{sha_a[:2]}/{sha_a}-{sha_b}-{plan.key}.json"


def overlay_name(*, sha_a: str, sha_b: str, plan: Plan) -> str:
    return f"{PREFIX}/v{VERSION}/{sha_a[:2]}/{sha_a}-{sha_b}-{plan.key}.png"


def _cache_key(name: str) -> str:
    return f"atelier-compare:{name}"


def detail_get(*, sha_a: str, sha_b: str, plan: Plan) -> Detail | None:
    """The stored detail of this pair, or None when it has not been made (or cannot be read)."""
    name = detail_name(sha_a=sha_a, sha_b=sha_b, plan=plan)
    cached = cache.get(_cache_key(name))
    if isinstance(cached, Detail):
        return cached
    try:
        with default_storage.open(name, "rb") as handle:
            data = handle.read(MAX_DETAIL_BYTES + 1)
    except (FileNotFoundError, OSError):
        return None
    try:
        detail = Detail.model_validate_json(data[:MAX_DETAIL_BYTES])
    except ValidationError:
        logger.warning("comparison detail %s does not fit its schema; it will be made again", name)
        return None
    cache.set(_cache_key(name), detail, CACHE_SECONDS)
    return detail


def detail_put(*, sha_a: str, sha_b: str, plan: Plan, detail: Detail, overlay: bytes | None) -> Detail:
    """Keep a detail (and its overlay picture), replacing whatever was kept for this pair."""
    name = detail_name(sha_a=sha_a, sha_b=sha_b, plan=plan)
    if overlay is not None:
        picture = overlay_name(sha_a=sha_a, sha_b=sha_b, plan=plan)
        default_storage.delete(picture)
        detail = detail.model_copy(update={"overlay": default_storage.save(picture, ContentFile(overlay))})
    default_storage.delete(name)
    default_storage.save(name, ContentFile(detail.model_dump_json().encode()))
    cache.set(_cache_key(name), detail, CACHE_SECONDS)
    return detail
