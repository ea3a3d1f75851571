"""Markdown and code artifacts as safe HTML for platform pages.

The HTML itself is made from the agent's file inside a preview sandbox
(`sandbox_previewer.py`: Python-Markdown, Pygments), never in the web or
worker process: those parsers are not linear on hostile input. What comes
back is hostile too, so at ingestion it is sanitized once with nh3 (an
allow-list in linear time: no script, no event handlers, no style, only
http/https/mailto links) and stored. References to the run's own files become
`atelier-run-file:<path>`; images may point nowhere else, so a report cannot
make the viewer's browser call another host. A page view only swaps those
for signed artifact-origin URLs, one linear pass over the stored HTML.
"""

import re
from collections.abc import Callable
from html import escape, unescape
from posixpath import normpath

import nh3
from django.utils.safestring import SafeString, mark_safe

ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol",
    "p", "pre", "q", "s", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "u", "ul",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "td": {"align", "colspan", "rowspan"},
    "th": {"align", "colspan", "rowspan", "scope"},
    "ol": {"start"},
    "code": {"class"},
    "span": {"class"},
    "div": {"class"},
}
RUN_FILE_SCHEME = "atelier-run-file"
LINK_SCHEMES = {"http", "https", "mailto", RUN_FILE_SCHEME}
# Stored HTML is serialized by nh3, so every reference is a double-quoted attribute.
_RUN_FILE_REFERENCE = re.compile(f'="{RUN_FILE_SCHEME}:([^"<>]{{0,2048}})"')


def resolve_relative(reference: str, *, document_path: str) -> str | None:
    """The run-relative path a relative reference names, or None if it leaves the output folder."""
    if not reference or "://" in reference or reference.startswith(("/", "//", "data:", "#")) or ":" in reference:
        return None
    base = document_path.rsplit("/", 1)[0] if "/" in document_path else ""
    joined = normpath(f"{base}/{reference.split('#')[0].split('?')[0]}" if base else reference.split("#")[0])
    if joined.startswith(("..", "/")) or joined == ".":
        return None
    return joined


def _is_absolute_link(value: str) -> bool:
    return value.lower().startswith(("http://", "https://", "mailto:", "#"))


def sanitize_document(html: str, *, document_path: str) -> str:
    """The stored form of a rendered document: allow-listed HTML, run files as `atelier-run-file:` references."""

    def to_run_file(reference: str) -> str | None:
        target = resolve_relative(reference, document_path=document_path)
        return f"{RUN_FILE_SCHEME}:{target}" if target else None

    def attribute_filter(tag: str, attribute: str, value: str) -> str | None:
        if tag == "img" and attribute == "src":  # only the run's own files, never a tracker
            return to_run_file(value)
        if tag == "a" and attribute == "href" and not _is_absolute_link(value):
            return to_run_file(value)
        if attribute == "class":  # only Pygments' token classes, never layout-hijacking ones
            classes = [c for c in value.split() if c == "highlight" or (len(c) <= 3 and c.isalpha())]
            return " ".join(classes) or None
        return value

    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=LINK_SCHEMES,
        link_rel="noopener noreferrer nofollow ugc",
        strip_comments=True,
        attribute_filter=attribute_filter,
    )


def link_run_files(stored: str, *, url_for: Callable[[str], str]) -> SafeString:
    """Stored document HTML with each run-file reference replaced by `url_for(path)`."""

    def replace(match: re.Match[str]) -> str:
        return f'="{escape(url_for(unescape(match.group(1))))}"'

    return mark_safe(_RUN_FILE_REFERENCE.sub(replace, stored))  # noqa: S308  (sanitized at ingestion)


def plain_text_document(data: bytes) -> SafeString:
    """A document with no stored rendering, shown as escaped text (linear, nothing parsed)."""
    return mark_safe(f'<pre class="highlight"><code>{escape(decode_text(data))}</code></pre>')  # noqa: S308


def decode_text(data: bytes) -> str:
    """Text for display whatever the encoding claims; undecodable bytes become U+FFFD."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
