"""What a comparison of two versions says, typed.

The detail of a changed file comes out of a sandbox that opened agent files, so it
is believed only once it fits these schemas (`extra="forbid"`, bounded numbers and
strings): a report that does not is treated as no report at all.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from creations.models import Artifact, Run

MAX_DIFF_CHARS = 300_000  # the sandbox cuts its diff at a byte budget below this; more means a bad report
Box = tuple[int, int, int, int]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Failed(Strict):
    """A comparison the sandbox could not make, and why (its tool's words, cut short)."""

    error: str = Field(max_length=400)


class PixelDiff(Strict):
    width_a: int = Field(ge=0, le=1_000_000)
    height_a: int = Field(ge=0, le=1_000_000)
    width_b: int = Field(ge=0, le=1_000_000)
    height_b: int = Field(ge=0, le=1_000_000)
    changed_pixels: int = Field(ge=0)
    total_pixels: int = Field(ge=0)
    # Left, top, right, bottom (right and bottom exclusive), in the pixels of the larger version.
    region: Box | None = None

    @property
    def percent_changed(self) -> float:
        return 100.0 * self.changed_pixels / self.total_pixels if self.total_pixels else 0.0

    @property
    def resized(self) -> bool:
        return (self.width_a, self.height_a) != (self.width_b, self.height_b)


class LineDiff(Strict):
    lines_a: int = Field(ge=0)
    lines_b: int = Field(ge=0)
    added: int = Field(ge=0)
    removed: int = Field(ge=0)
    diff: str = Field(max_length=MAX_DIFF_CHARS)  # unified, without its ---/+++ header
    truncated: bool  # the diff was cut to its size budget (the counts are the whole diff's)


class MediaFacts(Strict):
    duration: float | None = Field(default=None, ge=0)  # seconds
    width: int | None = Field(default=None, ge=0, le=100_000)
    height: int | None = Field(default=None, ge=0, le=100_000)
    video_codec: str = Field(default="", max_length=40)
    audio_codec: str = Field(default="", max_length=40)
    sample_rate: int | None = Field(default=None, ge=0, le=10_000_000)


class MediaPair(Strict):
    a: MediaFacts | Failed
    b: MediaFacts | Failed


class Detail(Strict):
    """What the sandbox found about one changed file; a section is None when not asked for."""

    pixels: PixelDiff | Failed | None = None
    lines: LineDiff | Failed | None = None
    media: MediaPair | None = None
    overlay: str = Field(default="", max_length=300)  # the overlay PNG's name in storage, if one was made


class DetailState(enum.StrEnum):
    READY = "ready"
    PENDING = "pending"  # being computed in a preview sandbox: look again shortly
    NONE = "none"  # nothing more to say of this kind of file than its checksum
    UNAVAILABLE = "unavailable"  # too large, or stored before checksums were kept


class FileState(enum.StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Plan:
    """What to compare for one changed file, decided from its kind and size only."""

    pixels: str = ""  # "source" (the files), "preview" (their preview PNGs), or "" (none)
    svg: bool = False  # the files are SVG: drawn before their pixels are compared
    lines: bool = False
    media: bool = False

    @property
    def key(self) -> str:
        parts = [f"pixels-{self.pixels}" if self.pixels else "", "svg" if self.svg else ""]
        parts += ["lines" if self.lines else "", "media" if self.media else ""]
        return "+".join(part for part in parts if part) or "none"

    def __bool__(self) -> bool:
        return bool(self.pixels or self.lines or self.media)


@dataclass
class FileComparison:
    path: str
    state: FileState
    a: Artifact | None  # the older version's file (None: added)
    b: Artifact | None  # the newer version's file (None: removed)
    plan: Plan = field(default_factory=Plan)
    detail_state: DetailState = DetailState.NONE
    detail: Detail | None = None
    note: str = ""  # why there is no detail, for the person reading

    @property
    def versions(self) -> tuple[Artifact, Artifact]:
        """Both versions of a file that is in both runs."""
        if self.a is None or self.b is None:
            raise ValueError(f"{self.path} is not in both runs")
        return self.a, self.b

    @property
    def kind(self) -> str:
        artifact = self.b or self.a
        assert artifact is not None
        return artifact.kind


@dataclass
class RunComparison:
    run_a: Run
    run_b: Run
    files: list[FileComparison]

    def with_state(self, state: FileState) -> list[FileComparison]:
        return [item for item in self.files if item.state == state]

    @property
    def added(self) -> list[FileComparison]:
        return self.with_state(FileState.ADDED)

    @property
    def removed(self) -> list[FileComparison]:
        return self.with_state(FileState.REMOVED)

    @property
    def changed(self) -> list[FileComparison]:
        return self.with_state(FileState.CHANGED)

    @property
    def unchanged(self) -> list[FileComparison]:
        return self.with_state(FileState.UNCHANGED)

    @property
    def pending(self) -> bool:
        return any(item.detail_state == DetailState.PENDING for item in self.files)
