"""Plain text shown as a document without starting a sandbox.

A text file whose name no syntax highlighter claims (notes, logs, CSV exports) has nothing to parse:
the preview sandbox would only escape it. Deciding that needs the name alone, matched against
Pygments' file-name patterns as the sandbox's highlighter matches them, never the content; making
the document is escaping at most ARTIFACT_INLINE_RENDER_MAX_BYTES, in the same markup the
sandbox's highlighter writes for text it has no lexer for, so the page looks the same either way.
"""

from __future__ import annotations

import html
from fnmatch import fnmatchcase
from functools import cache, lru_cache

from pygments.lexers import get_all_lexers

# The highlighter's own "no language" lexer, whose patterns (*.txt) do not make a file code.
PLAIN_LEXER = "Text only"


@cache
def _highlighted_name_patterns() -> tuple[str, ...]:
    return tuple(
        pattern
        for name, _aliases, patterns, _mimetypes in get_all_lexers(plugins=True)
        if name != PLAIN_LEXER
        for pattern in patterns
    )


@lru_cache(maxsize=4096)
def is_plain_text(name: str) -> bool:
    """Whether no lexer but plain text's claims a file called `name` (its last path segment)."""
    base = name.rsplit("/", 1)[-1]
    return not any(fnmatchcase(base, pattern) for pattern in _highlighted_name_patterns())


def plain_text_document(data: bytes) -> str:
    """`data` as the highlighter's HTML for plain text: decoded as the sandbox decodes it, line
    endings made `\\n` and a last one added, as its lexer does, then escaped."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.endswith("\n"):
        text += "\n"
    return f'<div class="highlight"><pre><span></span><code>{html.escape(text, quote=False)}</code></pre></div>\n'
