"""Taking names out of what a run's events say, for a reader who may not be told them.

A blind comparison hides each contestant's model until the reader votes (the arena's rule,
creations.arena.selectors, decides from whom and which names). Its runs' events still carry
words the platform or the model's provider wrote, which may name the model: the reason on a
status event ("The model endpoint “…” is unreachable"), a provider's error text on an error
event, the agent's closing message. Those fields are told with each name replaced; what the
model itself wrote (its messages, its commands and their output) is the work being judged and
is left as it is.

Readers pass the names to hide (none: the event as stored); this layer knows nothing of the
arena, so a reader that forgets to ask leaves nothing out of its own accord, and every reader
takes the names as a required argument.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# What stands for a hidden model's name in a text that would have named it.
HIDDEN_NAME = "(hidden)"

# The fields of each kind of event that hold the platform's or a provider's words, not the model's.
TOLD_FIELDS: dict[str, tuple[str, ...]] = {
    "status": ("reason",),
    "error": ("message",),
    "finished": ("message",),
}


def _pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    """Each name as a whole: bounded by non-word characters at an end that is a word character, so a
    one-letter name hides that word, not that letter in every other word. Longest first, so a name
    that contains another is replaced whole."""
    parts = []
    for name in sorted({name for name in names if name}, key=len, reverse=True):
        start = r"(?<!\w)" if re.match(r"\w", name[0]) else ""
        end = r"(?!\w)" if re.match(r"\w", name[-1]) else ""
        parts.append(start + re.escape(name) + end)
    return re.compile("|".join(parts)) if parts else None


def text_without_names(text: str, names: Sequence[str]) -> str:
    """`text` with each whole occurrence of each of `names` replaced by HIDDEN_NAME."""
    pattern = _pattern(names)
    if pattern is None or not text:
        return text
    return pattern.sub(HIDDEN_NAME, text)


def event_shown(event: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """An event in its wire form ({"seq", "kind", "payload", "at"}) as told to a reader from whom
    `names` are hidden: a copy with its told fields rewritten, or the event itself when nothing changes."""
    fields = TOLD_FIELDS.get(event.get("kind", ""))
    payload = event.get("payload")
    if not names or not fields or not isinstance(payload, dict):
        return event
    told = {name: text_without_names(payload[name], names) for name in fields if isinstance(payload.get(name), str)}
    if all(payload[name] == value for name, value in told.items()):
        return event
    return {**event, "payload": {**payload, **told}}


def payload_shown(kind: str, payload: Any, names: Sequence[str]) -> Any:
    """A stored payload of `kind` as told to a reader from whom `names` are hidden."""
    return event_shown({"kind": kind, "payload": payload}, names)["payload"]
