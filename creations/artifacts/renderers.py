"""Markdown and text artifacts rendered into platform pages, safely.

Markdown becomes HTML and is then sanitized with nh3 (an allow-list: no script,
no event handlers, no style, only http/https/mailto links); images may only
point at artifacts of the same run (rewritten to signed artifact-origin URLs),
so a report cannot make the viewer's browser call anything else. Text and code
are escaped and highlighted by Pygments.
"""

from collections.abc import Callable
from posixpath import normpath

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

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
LINK_SCHEMES = {"http", "https", "mailto"}
MARKDOWN_EXTENSIONS = ["extra", "sane_lists", "codehilite", "toc"]
MARKDOWN_CONFIG = {"codehilite": {"guess_lang": False, "css_class": "highlight"}}

# Given a relative reference from the markdown (an image or a link), the signed URL of
# the run's artifact it names, or None to drop it.
ReferenceResolver = Callable[[str], str | None]


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


def render_markdown(text: str, *, resolve: ReferenceResolver) -> SafeString:
    html = markdown.markdown(text, extensions=MARKDOWN_EXTENSIONS, extension_configs=MARKDOWN_CONFIG)

    def attribute_filter(tag: str, attribute: str, value: str) -> str | None:
        if tag == "img" and attribute == "src":  # only the run's own files, never a tracker
            return resolve(value)
        if tag == "a" and attribute == "href" and not _is_absolute_link(value):
            return resolve(value)
        if attribute == "class":  # only Pygments' token classes, never layout-hijacking ones
            classes = [c for c in value.split() if c == "highlight" or (len(c) <= 3 and c.isalpha())]
            return " ".join(classes) or None
        return value

    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=LINK_SCHEMES,
        link_rel="noopener noreferrer nofollow ugc",
        strip_comments=True,
        attribute_filter=attribute_filter,
    )
    return mark_safe(clean)  # noqa: S308  (nh3 output: an allow-list of tags, attributes and schemes)


def lexer_for(filename: str, text: str) -> Lexer:
    try:
        return get_lexer_for_filename(filename, text, stripnl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False)


def render_code(text: str, *, filename: str) -> SafeString:
    formatter = HtmlFormatter(cssclass="highlight", linenos=False, wrapcode=True)
    return mark_safe(highlight(text, lexer_for(filename, text), formatter))  # noqa: S308  (Pygments escapes)


def decode_text(data: bytes) -> str:
    """Text for display whatever the encoding claims; undecodable bytes become U+FFFD."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
