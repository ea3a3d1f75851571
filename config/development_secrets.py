"""Secrets for development only: made once per checkout, kept in a file of its own.

Never a constant in the code: a constant is the same on every machine, so
anything signed or encrypted with it (sessions, artifact URLs, stored API keys)
could be forged or read by anyone who has read the code.
"""

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def development_secret(path: Path, make: Callable[[], str]) -> str:
    """The secret kept at `path` (mode 0600), made with `make()` the first time.

    Several processes start at once (daphne, the worker): the file appears
    whole or not at all (written aside, then linked into place), and whoever
    links first wins; the others read the winner's.
    """
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
    try:
        with os.fdopen(fd, "w") as file:
            file.write(make() + "\n")
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs is kept
            os.link(draft, path)
    finally:
        os.unlink(draft)
    return _read(path)


def _read(path: Path) -> str:
    value = path.read_text().strip()
    if not value:
        raise ImproperlyConfigured(f"{path} is empty: delete it to make a new development secret.")
    return value
