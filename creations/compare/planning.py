"""What to compare of two versions of one path, decided from their kinds and sizes alone (no byte of
them is read): the pages and the API show it before any sandbox starts, and the differ (differ.py)
compares what it says."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from creations.compare.results import Plan
from creations.models import Artifact, ArtifactKind

# Text compared line by line up to this size per version (difflib's time grows with the lines that differ).
MAX_TEXT_BYTES = 4 * 1024 * 1024

PIXEL_KINDS = {ArtifactKind.IMAGE}  # decoded as they are
PREVIEW_PIXEL_KINDS = {ArtifactKind.VIDEO, ArtifactKind.PDF, ArtifactKind.HTML, ArtifactKind.MAP}  # poster, page, shot
LINE_KINDS = {ArtifactKind.TEXT, ArtifactKind.MARKDOWN, ArtifactKind.HTML, ArtifactKind.MAP, ArtifactKind.SVG}
MEDIA_KINDS = {ArtifactKind.VIDEO, ArtifactKind.AUDIO}


@dataclass(frozen=True)
class Planned:
    plan: Plan
    note: str = ""  # why less (or nothing) is compared than the kind allows


def plan_for(a: Artifact, b: Artifact) -> Planned:
    """What to compare of two versions of one path, from their kinds and sizes (no byte of them is read)."""
    if a.kind != b.kind:
        return Planned(Plan(), note=f"It changed kind ({a.get_kind_display()} → {b.get_kind_display()}).")
    kind, largest = b.kind, max(a.size, b.size)
    pixels, note = "", ""
    if kind in PIXEL_KINDS or kind == ArtifactKind.SVG:
        pixels = "source"
    elif kind in PREVIEW_PIXEL_KINDS:
        if a.preview and b.preview:
            pixels = "preview"
        else:
            note = "No preview picture of both versions to compare."
    lines = kind in LINE_KINDS and largest <= MAX_TEXT_BYTES
    if kind in LINE_KINDS and not lines:
        note = "Too long for a line diff here."
    plan = Plan(pixels=pixels, svg=kind == ArtifactKind.SVG, lines=lines, media=kind in MEDIA_KINDS)
    if needs_sources(plan) and largest > settings.PREVIEW_MAX_INPUT_BYTES:  # previews are small: they still go
        plan = Plan(pixels="preview" if plan.pixels == "preview" else "")
        note = "Too large to compare here beyond its checksum."
    return Planned(plan, note=note)


def needs_sources(plan: Plan) -> bool:
    return plan.pixels == "source" or plan.lines or plan.media
