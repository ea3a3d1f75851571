"""Writing for people: colour only on a terminal that wants it, sizes and durations
in words, one-line shortening, and a yes/no question."""

from __future__ import annotations

import os
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
    flat = " ".join(text.split())
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
