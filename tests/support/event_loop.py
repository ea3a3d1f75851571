"""Django's test client beside Playwright's sync API in one test process."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def outside_playwrights_loop() -> Iterator[None]:
    """Django's test client runs an async view through async_to_sync, which refuses a thread whose event
    loop is marked running. Once a test process has opened a browser (the session's `browser` fixture),
    Playwright's sync API keeps its loop marked running in this thread: it runs it in a greenlet of the
    thread, though nothing runs on it between Playwright's calls. Within this block the mark is lifted."""
    loop = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        yield
    finally:
        asyncio.events._set_running_loop(loop)
