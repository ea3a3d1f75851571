"""Requests sent at the same moment, each in a thread with a database connection of its own,
while storing a file takes a while (as on a busy store): what one request checks, another
may check too before the first one's rows exist, unless they take turns."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import FileSystemStorage
from django.db import connection

SLOW_SAVE_SECONDS = 0.5


def at_once(requests: list[Callable[[], Any]], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Each request's answer, or the ValidationError it raised, in the order they came."""
    save = FileSystemStorage.save

    def slow_save(storage: FileSystemStorage, name: str | None, content: Any, **options: Any) -> str:
        time.sleep(SLOW_SAVE_SECONDS)
        return save(storage, name, content, **options)

    monkeypatch.setattr(FileSystemStorage, "save", slow_save)
    start, answers = threading.Barrier(len(requests)), list[Any]()

    def send(request: Callable[[], Any]) -> None:
        try:
            start.wait()
            try:
                answers.append(request())
            except ValidationError as refused:
                answers.append(refused)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(request,)) for request in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers
