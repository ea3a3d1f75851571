"""@mentions: the members a comment's text names, and its text as HTML with them marked.

A mention is `@` and a username as Django allows them (letters, digits and @.+-_), not
glued to a word before it (an e-mail address is not a mention). A sentence's full stop after
a name is not part of it."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.contrib.auth.models import User
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

MENTION = re.compile(r"(?<![\w.@+-])@([\w.@+-]+)")
TRAILING_PUNCTUATION = ".-+@"


def mentioned_names(text: str) -> list[str]:
    """The names the text mentions, as typed (lowercase), each once, in order; trailing
    punctuation left off, and kept as a second guess for names that end with it."""
    names: list[str] = []
    for match in MENTION.finditer(text):
        for name in dict.fromkeys([match.group(1), match.group(1).rstrip(TRAILING_PUNCTUATION)]):
            if name and name.lower() not in names:
                names.append(name.lower())
    return names


def members_mentioned(text: str, members: Iterable[User]) -> list[User]:
    """Of `members`, those the text mentions (names compared without case)."""
    wanted = set(mentioned_names(text))
    return [member for member in members if member.get_username().lower() in wanted]


def text_as_html(text: str, mentioned: Iterable[str]) -> SafeString:
    """The comment's text, escaped, with line breaks kept and the mentions of `mentioned`
    (usernames) marked; nothing a comment says is ever read as HTML."""
    names = {name.lower() for name in mentioned}

    def mark(match: re.Match[str]) -> str:
        typed = match.group(1)
        for name in (typed, typed.rstrip(TRAILING_PUNCTUATION)):
            if name.lower() in names:
                return f'<span class="mention">@{name}</span>{typed[len(name):]}'
        return match.group(0)

    # Escaping leaves usernames' characters alone, so mentions are found in the escaped text.
    html = MENTION.sub(mark, escape(text))
    return mark_safe(html.replace("\r\n", "\n").replace("\n", "<br>"))  # noqa: S308 - escaped above
