"""Text a client sends that the platform stores: never with a NUL character, which PostgreSQL refuses,
and never with a lone UTF-16 surrogate (JSON may carry one as `\\ud800`), which is not text and
cannot be encoded to store it."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def _storable(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain the NUL character (\\u0000)")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        lone = value[error.start]
        raise ValueError(
            f"must be text: it holds a lone surrogate (\\u{ord(lone):04x}), half of a character; send the whole one"
        ) from None
    return value


StoredText = Annotated[str, AfterValidator(_storable)]
