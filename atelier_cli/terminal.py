"""Writing for people: colour only on a terminal that wants it, text from the server
made harmless to a terminal, sizes and durations in words, one-line shortening, and a
yes/no question."""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO

CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "cyan": "36"}


def wants_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


class Style:
    def __init__(self, *, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, *styles: str) -> str:
        if not self.colour or not styles:
            return text
        codes = ";".join(CODES[style] for style in styles)
        return f"\033[{codes}m{text}\033[0m"


# What a terminal acts on rather than shows, whole: CSI (colours, cursor moves, erasing),
# the strings OSC, DCS, SOS, PM and APC carry up to their terminator (window titles,
# hyperlinks, clipboard writes), and other escapes; each in its 7-bit (ESC …) and 8-bit
# (C1) form. A sequence cut short at the end of the text goes too.
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
# Any control character left, C0 and C1 and DEL, but newline and tab.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` from the server (what a model or an agent wrote, a file's name, a title)
    as a terminal may receive it: without control sequences or control characters, but
    newline and tab. Otherwise a model's words could recolour, move, retitle or clear the
    terminal, or forge a line of this client's own."""
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} B"


def human_seconds(seconds: float) -> str:
    if seconds < 0.1:
        return "<0.1 s"
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def one_line(text: str, width: int) -> str:
    """`text` on one printable line, cut to `width` characters."""
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


def ask_yes(question: str, *, stdin: TextIO | None = None, stderr: TextIO | None = None) -> bool:
    """Asked on stderr, answered on stdin; anything but yes (or no answer at all) is no."""
    stdin, stderr = stdin or sys.stdin, stderr or sys.stderr
    stderr.write(question)
    stderr.flush()
    answer = stdin.readline()
    if not answer:
        stderr.write("\n")
    return answer.strip().lower() in ("y", "yes")
