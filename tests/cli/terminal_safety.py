"""What a hostile model or agent may write to reach a terminal, and what must never
arrive there (tests/cli/test_terminal_safety.py, and the console script's in test_cli.py)."""

from __future__ import annotations

import re

# Clears the screen, homes the cursor, retitles the window, plants a hyperlink (whose text,
# "click", is all a terminal shows of it), turns text red the 8-bit way, asks the terminal
# to answer (DCS), returns the carriage, backspaces, and rings.
ESCAPES = (
    "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]8;;http://evil.test/\x1b\\click\x1b]8;;\x1b\\"
    "\x9b31m\x9d2;title\x9c\x1bP+q544e\x1b\\\r\x08\x00\x07\x7f\x85"
)
# Control characters but newline and tab: C0, DEL and C1.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# What a row may hold of them: PostgreSQL's text and jsonb take no NUL.
STORED_ESCAPES = ESCAPES.replace("\x00", "")
