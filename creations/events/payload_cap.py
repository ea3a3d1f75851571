"""An event payload held to a size: its biggest fields cut to a prefix, their whole text kept as a file
the payload points to, and counted in the run's storage (creations/events/store.py stores the events)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db.models import F

from creations.models import Run


def _json_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def cap_payload(run_id: int, payload: dict[str, Any], *, limit: int | None = None) -> dict[str, Any]:
    """A payload that fits `limit` bytes of JSON: the biggest fields are cut to
    a prefix and their whole text stored as a file the payload points to."""
    limit = limit or settings.RUN_EVENT_PAYLOAD_MAX_BYTES
    if _json_size(payload) <= limit:
        return payload
    capped = dict(payload)
    overflow: dict[str, dict[str, Any]] = {}
    # Largest fields first; each is replaced by a short prefix plus a file.
    for key in sorted(capped, key=lambda k: _json_size(capped[k]), reverse=True):
        if _json_size(capped) <= limit:
            break
        value = capped[key]
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        data = text.encode()
        name = default_storage.save(f"run-events/{run_id}/{uuid.uuid4().hex}.txt", ContentFile(data))
        overflow[key] = {"path": name, "bytes": len(data)}
        capped[key] = ""
        room = max(0, limit - _json_size({**capped, "overflow": overflow, "truncated": True}) - 64)
        capped[key] = _prefix_within(text, room)
    capped["overflow"] = overflow
    capped["truncated"] = True
    return capped


def count_event_files(run_id: int, capped: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """Add the bytes of the files `cap_payload` just stored to the run's `event_file_bytes`: they stay
    as long as the run does, whether or not their events are stored, and its workspace's storage counts them."""
    stored = sum(
        int(entry.get("bytes") or 0)
        for _, payload in capped
        for entry in (payload.get("overflow") or {}).values()
        if isinstance(entry, dict)
    )
    if stored:
        Run.objects.filter(pk=run_id).update(event_file_bytes=F("event_file_bytes") + stored)


def _prefix_within(text: str, max_bytes: int) -> str:
    """The longest prefix whose JSON encoding fits in max_bytes (escapes count)."""
    prefix = text.encode()[:max_bytes].decode(errors="ignore")
    while prefix and _json_size(prefix) > max_bytes:
        prefix = prefix[: int(len(prefix) * 0.9)]
    return prefix
