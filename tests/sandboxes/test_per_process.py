"""Process-wide singletons (sandboxes.per_process): built once per process however many threads
ask at once, one per distinct arguments, never kept when the build fails, and built anew in a
forked child (Celery's prefork pool) rather than shared with its parent."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Hashable

import pytest

from sandboxes.per_process import per_process, per_process_by


class Thing:
    def __init__(self, name: str = "") -> None:
        self.name = name


def test_threads_asking_at_once_get_one_object_built_once() -> None:
    builds = []

    @per_process
    def shared() -> Thing:
        builds.append(1)
        time.sleep(0.05)  # long enough for every thread to be waiting on the first build
        return Thing()

    seen: list[Thing] = []
    threads = [threading.Thread(target=lambda: seen.append(shared())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert len({id(thing) for thing in seen}) == 1


def test_one_object_per_distinct_arguments_or_per_key() -> None:
    @per_process
    def named(name: str, *, loud: bool = False) -> Thing:
        return Thing(name.upper() if loud else name)

    assert named("a") is named("a")
    assert named("a") is not named("b")
    assert named("a", loud=True).name == "A"

    def first_letter(name: str) -> Hashable:
        return name[0]

    @per_process_by(first_letter)
    def by_letter(name: str) -> Thing:
        return Thing(name)

    assert by_letter("apple") is by_letter("avocado")
    assert by_letter("avocado").name == "apple"


def test_a_build_that_fails_keeps_nothing_and_the_next_call_tries_again() -> None:
    attempts = []

    @per_process
    def flaky() -> Thing:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("not yet")
        return Thing("second try")

    with pytest.raises(ConnectionError):
        flaky()
    assert flaky().name == "second try"
    assert flaky() is flaky()
    assert len(attempts) == 2


def test_reset_and_forget_hand_back_what_was_built_and_the_next_call_builds_anew() -> None:
    @per_process
    def named(name: str) -> Thing:
        return Thing(name)

    a, b = named("a"), named("b")
    assert named.forget("a") is a
    assert named.forget("a") is None
    assert named("a") is not a
    assert b in named.reset()
    assert named("b") is not b


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system")
def test_a_forked_child_builds_its_own_and_the_parent_keeps_its_own() -> None:
    @per_process
    def shared() -> Thing:
        return Thing(str(os.getpid()))

    parent_thing = shared()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer with what it was handed, then leave at once
        try:
            os.write(write, f"{shared().name}:{shared() is parent_thing}".encode())
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 100).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == f"{pid}:False"
    assert shared() is parent_thing
