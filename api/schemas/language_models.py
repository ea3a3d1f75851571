"""What the API says of a language model a workspace may use (never its key)."""

from __future__ import annotations

from ninja import Schema


class ModelOut(Schema):
    id: int | None  # None: the built-in demo model (no key, replays bundled trajectories)
    name: str
    model: str
    base_url: str | None
    last_check: str | None  # the verdict of the last "test connection", e.g. "works"
