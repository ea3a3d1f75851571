"""Files an agent leaves beside another to say what it shows or says (the system prompt asks for them):

- `<file>.alt.txt`: a text alternative for a picture, video, map or page (ALT_TEXT_MAX_CHARS),
  or a transcript or description of an audio file (TRANSCRIPT_MAX_CHARS);
- `<file>.vtt`: a video's captions, WebVTT (CAPTIONS_MAX_BYTES).

Each is read at ingestion, bounded and checked: UTF-8 text with no NUL, within its limit, and for
captions a WebVTT header and at least one cue. A sidecar that passes becomes a field of its file's
Artifact and no file of its own; one that does not (or whose file is not of a kind it describes)
is kept as an ordinary file, so nothing the agent made is lost.
"""

from __future__ import annotations

import re
from pathlib import Path

from creations.models import ArtifactKind
from sandboxes.agent.prompts import ALT_TEXT_MAX_CHARS, CAPTIONS_MAX_BYTES, TRANSCRIPT_MAX_CHARS

ALT_SUFFIX = ".alt.txt"
CAPTIONS_SUFFIX = ".vtt"
DESCRIBED_KINDS = frozenset(
    {ArtifactKind.IMAGE, ArtifactKind.SVG, ArtifactKind.VIDEO, ArtifactKind.MAP, ArtifactKind.HTML, ArtifactKind.PDF}
)
HEARD_KINDS = frozenset({ArtifactKind.AUDIO, ArtifactKind.MIDI})
CAPTIONED_KINDS = frozenset({ArtifactKind.VIDEO})
_CUE_TIMING = re.compile(r"^(?:\d{2,}:)?[0-5]\d:[0-5]\d\.\d{3}[ \t]+-->[ \t]+(?:\d{2,}:)?[0-5]\d:[0-5]\d\.\d{3}", re.M)
_HEADER = re.compile(r"\AWEBVTT(?:[ \t][^\n]*)?(?:\n|\Z)")


def sidecar_target(path: str, paths: set[str]) -> str | None:
    """The file `path` is a sidecar of, when that file is among `paths` (and no sidecar itself)."""
    for suffix in (ALT_SUFFIX, CAPTIONS_SUFFIX):
        target = path[: -len(suffix)] if path.endswith(suffix) else ""
        if target and target in paths and not target.endswith((ALT_SUFFIX, CAPTIONS_SUFFIX)):
            return target
    return None


def _read_text(local_path: Path, max_bytes: int) -> str | None:
    with local_path.open("rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        return None
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def alt_text(local_path: Path, kind: str) -> str | None:
    """The sidecar's text for a file of `kind`, or None when it does not describe one or is not usable."""
    if kind in HEARD_KINDS:
        limit = TRANSCRIPT_MAX_CHARS
    elif kind in DESCRIBED_KINDS:
        limit = ALT_TEXT_MAX_CHARS
    else:
        return None
    text = _read_text(local_path, limit * 4)  # UTF-8: at most four bytes a character
    if text is None:
        return None
    # A picture's alternative is read out as one passage; a transcript keeps its lines.
    text = " ".join(text.split()) if kind not in HEARD_KINDS else text.strip()
    return text if 0 < len(text) <= limit else None


def captions(local_path: Path, kind: str) -> str | None:
    """The sidecar's WebVTT for a video, or None when it is not WebVTT a browser would show."""
    if kind not in CAPTIONED_KINDS:
        return None
    text = _read_text(local_path, CAPTIONS_MAX_BYTES)
    if text is None or not _HEADER.match(text) or not _CUE_TIMING.search(text):
        return None
    return text
