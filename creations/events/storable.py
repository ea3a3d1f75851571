"""Text PostgreSQL can store, whatever a model or a command printed.

PostgreSQL refuses NUL in `text` and `\\u0000` in `jsonb`, and a lone UTF-16
surrogate (which a model's JSON may carry as `\\ud800`) cannot be encoded at
all; either would abort the write and with it the run. They are replaced by
visible stand-ins instead: NUL by U+2400 (the symbol for null), a lone
surrogate by U+FFFD.
"""

from __future__ import annotations

import json
import re
from typing import Any

NUL_STAND_IN = "\u2400"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _replace(match: re.Match[str]) -> str:
    return NUL_STAND_IN if match.group() == "\x00" else "\ufffd"


def storable_text(text: str) -> str:
    return _UNSTORABLE.sub(_replace, text)


def storable_value(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings, numbers) with every string made storable, keys included."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_text(str(key)): storable_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable_value(item) for item in value]
    return value


def storable_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload itself when it is already storable (the usual case: one scan of its JSON), else a clean copy."""
    encoded = json.dumps(payload, ensure_ascii=False)
    if "\\u0000" not in encoded and not _UNSTORABLE.search(encoded):
        return payload
    cleaned: dict[str, Any] = storable_value(payload)
    return cleaned
