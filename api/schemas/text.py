"""Text a client sends that the platform stores: never with a NUL character, which PostgreSQL refuses."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def _without_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain the NUL character (\\u0000)")
    return value


StoredText = Annotated[str, AfterValidator(_without_nul)]
