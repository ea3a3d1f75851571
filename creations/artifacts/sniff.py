"""What kind of file the agent made, judged from its content, never its name.

A model can be prompt-injected, so `report.png` may well be HTML. The kind
decides how a file is shown (an <img>, a sandboxed iframe, a sanitized
markdown render), so it comes from the bytes: signatures for the media we
show, a parse of the start of text files for HTML/SVG, and puremagic for the
content type of anything else. The name is only used to choose between the
harmless text kinds (markdown or plain text), which render the same way safely.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import puremagic

from creations.models import ArtifactKind

HEAD_BYTES = 64 * 1024
TEXT_CONTENT_TYPE = "text/plain; charset=utf-8"
OCTET_STREAM = "application/octet-stream"
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown")

# Content types puremagic may name for "other" files: never anything a browser would run or render as a page.
_UNSAFE_MIME_MARKERS = ("html", "xml", "svg", "javascript", "ecmascript", "text/")


@dataclass(frozen=True)
class Sniffed:
    kind: str  # an ArtifactKind value
    content_type: str


def sniff_file(path: Path, *, name: str = "") -> Sniffed:
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    return sniff_bytes(head, name=name)


def sniff_bytes(head: bytes, *, name: str = "") -> Sniffed:
    """Classify from the first bytes of a file (64 KiB is plenty)."""
    binary = _binary_kind(head)
    if binary is not None:
        return binary
    text = _as_text(head)
    if text is None:
        return Sniffed(ArtifactKind.OTHER, _other_content_type(head))
    return _text_kind(text, name=name)


# --- binary formats ------------------------------------------------------


def _binary_kind(head: bytes) -> Sniffed | None:
    image = ArtifactKind.IMAGE
    audio = ArtifactKind.AUDIO
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return Sniffed(image, "image/png")
    if head.startswith(b"\xff\xd8\xff"):
        return Sniffed(image, "image/jpeg")
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return Sniffed(image, "image/gif")
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return Sniffed(image, "image/webp")
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return Sniffed(audio, "audio/wav")
    if head.startswith(b"%PDF-"):
        return Sniffed(ArtifactKind.PDF, "application/pdf")
    if head.startswith(b"MThd"):
        return Sniffed(ArtifactKind.MIDI, "audio/midi")
    if head.startswith(b"fLaC"):
        return Sniffed(audio, "audio/flac")
    if head.startswith(b"OggS"):
        # An Ogg stream's first page names its codec; Theora means video.
        if b"\x80theora" in head[:512]:
            return Sniffed(ArtifactKind.VIDEO, "video/ogg")
        return Sniffed(audio, "audio/ogg")
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"M4A ", b"M4B "):
            return Sniffed(audio, "audio/mp4")
        return Sniffed(ArtifactKind.VIDEO, "video/mp4")
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        if b"webm" in head[:64]:
            return Sniffed(ArtifactKind.VIDEO, "video/webm")
        return Sniffed(ArtifactKind.OTHER, "video/x-matroska")
    if head.startswith(b"ID3") or _is_mpeg_audio_frame(head):
        return Sniffed(audio, "audio/mpeg")
    return None


def _is_mpeg_audio_frame(head: bytes) -> bool:
    # Frame sync (11 set bits), MPEG version not "reserved", layer III.
    if len(head) < 4 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0:
        return False
    version = (head[1] >> 3) & 0b11
    layer = (head[1] >> 1) & 0b11
    bitrate = head[2] >> 4
    return version != 0b01 and layer == 0b01 and bitrate not in (0, 0b1111)


def _other_content_type(head: bytes) -> str:
    try:
        matches = puremagic.magic_string(head)
    except (puremagic.PureError, ValueError):
        return OCTET_STREAM
    for match in matches:
        mime = (match.mime_type or "").lower()
        if mime and match.confidence >= 0.8 and not any(marker in mime for marker in _UNSAFE_MIME_MARKERS):
            return mime
    return OCTET_STREAM


# --- text formats ----------------------------------------------------------


def _as_text(head: bytes) -> str | None:
    if b"\x00" in head:
        return None
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as error:
        # The 64 KiB cut may split a character; only the tail may be broken.
        if error.start >= len(head) - 4:
            return head[: error.start].decode("utf-8")
        return None


# Every pattern below runs on up to HEAD_BYTES of agent-written text, so each
# one is linear in it: no unbounded repetition that can backtrack across a
# line (`^\s*` would rescan every following blank line, quadratic on a file of
# newlines), and bounded spans inside brackets.
_HTML_START = re.compile(r"<!doctype[ \t\r\n]+html|<html[\s>]|<head[\s>]|<body[\s>]", re.IGNORECASE)
_HTML_TAGS = re.compile(r"<(?:script|iframe|div|table|p|h1|style|meta|title|a\s)[\s>/]", re.IGNORECASE)
_SVG_START = re.compile(r"<svg[\s>]", re.IGNORECASE)
_LEAFLET = re.compile(r"\bL\.map[ \t]{0,8}\(|leaflet(?:\.min)?\.(?:js|css)|\bleaflet\b", re.IGNORECASE)
_MARKDOWN_FEATURES = (
    re.compile(r"^#{1,6} \S", re.MULTILINE),  # headings
    re.compile(r"^[ \t]{0,12}(?:[-*+]|\d{1,9}\.) \S", re.MULTILINE),  # lists
    re.compile(r"\[[^\[\]\n]{1,300}\]\([^()\s]{1,2000}\)"),  # links
    re.compile(r"^```", re.MULTILINE),  # fenced code
    re.compile(r"^\|?[ ]{0,8}:?-{3,}:?[ ]{0,8}\|", re.MULTILINE),  # tables
    re.compile(r"(?<![\w*])\*\*[^*\n]{1,300}\*\*(?!\w)"),  # bold
    re.compile(r"^> \S", re.MULTILINE),  # quotes
)
_CODE_LINES = re.compile(
    r"^[ \t]*(?:def |class |import |from \S{1,200} import|function |const |let |var |#include|public |package )"
    r"|[;{][ \t]*$",
    re.MULTILINE,
)
# What may come before the first element of an XML or HTML document, each with where it ends.
_PROLOGUE_PARTS = (("<?xml", "?>"), ("<!--", "-->"), ("<!doctype", ">"))


def _skip_prologue(text: str) -> str:
    """The text after any BOM, whitespace, XML declaration, comments and doctype (one pass)."""
    position = 0
    while True:
        while position < len(text) and (text[position] == "\ufeff" or text[position].isspace()):
            position += 1
        for opening, closing in _PROLOGUE_PARTS:
            if text[position : position + len(opening)].lower() == opening:
                end = text.find(closing, position + len(opening))
                position = len(text) if end < 0 else end + len(closing)
                break
        else:
            return text[position:]


def _text_kind(text: str, *, name: str) -> Sniffed:
    body = _skip_prologue(text)
    if _SVG_START.match(body):
        return Sniffed(ArtifactKind.SVG, "image/svg+xml")
    if _looks_like_html(text, body):
        kind = ArtifactKind.MAP if _LEAFLET.search(text) else ArtifactKind.HTML
        return Sniffed(kind, "text/html; charset=utf-8")
    if name.lower().endswith(MARKDOWN_SUFFIXES) or _looks_like_markdown(text):
        return Sniffed(ArtifactKind.MARKDOWN, "text/markdown; charset=utf-8")
    return Sniffed(ArtifactKind.TEXT, TEXT_CONTENT_TYPE)


def _looks_like_html(text: str, body: str) -> bool:
    if _HTML_START.search(text[:4096]):
        return True
    # A fragment without <html>: browsers still render it as a page.
    return body.startswith("<") and len(_HTML_TAGS.findall(text[:8192])) >= 2


def _looks_like_markdown(text: str) -> bool:
    features = sum(1 for pattern in _MARKDOWN_FEATURES if pattern.search(text))
    lines = [line for line in text.splitlines() if line.strip()]
    code_share = len(_CODE_LINES.findall(text)) / max(1, len(lines))
    return features >= 2 and code_share < 0.2
