"""A comparison of two runs, as the API answers it (creations/compare/results.py, flattened)."""

from __future__ import annotations

from typing import Literal

from ninja import Field, Schema

FileStateName = Literal["added", "removed", "changed", "unchanged"]
DetailStateName = Literal["ready", "pending", "none", "unavailable"]


class ComparedFileOut(Schema):
    artifact_id: int
    kind: str
    size: int
    sha256: str | None


class PixelsOut(Schema):
    """Pixels compared exactly: an identical rendering has 0 changed pixels. `error` says why not compared."""

    error: str | None = None
    percent_changed: float | None = None
    changed_pixels: int | None = None
    total_pixels: int | None = None
    width_a: int | None = None
    height_a: int | None = None
    width_b: int | None = None
    height_b: int | None = None
    region: list[int] | None = Field(
        default=None, description="The changed region: left, top, right, bottom (right and bottom exclusive)"
    )
    overlay_url: str | None = Field(
        default=None, description="The newer picture with the changed pixels drawn over it (artifact origin, expires)"
    )


class LinesOut(Schema):
    error: str | None = None
    lines_a: int | None = None
    lines_b: int | None = None
    added: int | None = None
    removed: int | None = None
    diff: str | None = Field(default=None, description="Unified diff, without its ---/+++ header")
    truncated: bool | None = Field(default=None, description="The diff was cut; the counts are the whole diff's")


class MediaFactsOut(Schema):
    error: str | None = None
    duration: float | None = None
    width: int | None = None
    height: int | None = None
    video_codec: str | None = None
    audio_codec: str | None = None
    sample_rate: int | None = None


class MediaOut(Schema):
    a: MediaFactsOut
    b: MediaFactsOut


class FileOut(Schema):
    path: str
    state: FileStateName
    kind: str
    a: ComparedFileOut | None = Field(description="In the run compared from; null: added")
    b: ComparedFileOut | None = Field(description="In the run compared to; null: removed")
    detail_state: DetailStateName = Field(description="For changed files: `pending` while a sandbox works it out")
    note: str
    pixels: PixelsOut | None = None
    lines: LinesOut | None = None
    media: MediaOut | None = None


class ComparisonOut(Schema):
    creation_id: int
    run_id: int
    other_run_id: int
    pending: bool = Field(description="Some details are still being made: ask again in a few seconds")
    files: list[FileOut]
