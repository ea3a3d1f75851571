"""Process-wide singletons: each built once per process, all in one way.

Some objects are shared by every thread of a process and cost something to make:
an HTTP client with its TLS context and connection pool, the warm sandbox pool,
the Docker engine's answer to `docker info`, the way into the daemon's network
namespace, the thread that watches this process's runs. `per_process` turns the
function that builds one into the accessor that hands it out:

    @per_process
    def shared_thing() -> Thing:
        return Thing()

The first call builds it, under a lock, so threads that call at once build it
once; later calls return the same object. An accessor with arguments keeps one
object per distinct arguments (`per_process_by(key)`: per key of them). A build
that raises keeps nothing, and the next call tries again. A build must not call
its own accessor.

Why per process rather than per import: threads, connection pools and event
loops do not survive a fork, and a lock a parent's thread held at the fork is
never let go in the child. Celery's prefork pool and multiprocessing fork
processes that have imported the platform already, so every accessor forgets
what it built, lock included, in a forked child, which builds its own.

Tests that change what an object is built from call `accessor.reset()`. Values
read once that a fork cannot spoil (a file's text) stay plain `functools.cache`.

It lives in `sandboxes`, the package every other package may import
(pyproject.toml's import contracts).
"""

from __future__ import annotations

import functools
import os
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, Generic, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

_accessors: weakref.WeakSet[PerProcess[..., Any]] = weakref.WeakSet()


class PerProcess(Generic[P, T]):
    """An accessor `per_process` made: call it for the object; `forget` one, `reset` all."""

    def __init__(self, build: Callable[P, T], key: Callable[P, Hashable] | None = None) -> None:
        self._build = build
        self._key = key
        self._lock = threading.Lock()
        self._built: dict[Hashable, T] = {}
        functools.update_wrapper(self, build)
        _accessors.add(self)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        key = self._key_of(*args, **kwargs)
        with self._lock:
            if key not in self._built:
                self._built[key] = self._build(*args, **kwargs)
            return self._built[key]

    def forget(self, *args: P.args, **kwargs: P.kwargs) -> T | None:
        """Drop the object built for these arguments and return it (to stop or close), or None."""
        key = self._key_of(*args, **kwargs)
        with self._lock:
            return self._built.pop(key, None)

    def reset(self) -> list[T]:
        """Forget every object built so far and return them (to stop or close); the next call builds anew."""
        with self._lock:
            built, self._built = list(self._built.values()), {}
        return built

    def _key_of(self, *args: P.args, **kwargs: P.kwargs) -> Hashable:
        if self._key is not None:
            return self._key(*args, **kwargs)
        return (args, tuple(sorted(kwargs.items())))

    def _forget_in_child(self) -> None:
        self._lock = threading.Lock()
        self._built = {}


def per_process(build: Callable[P, T]) -> PerProcess[P, T]:
    """`build`'s object, built once per process (and per distinct arguments)."""
    return PerProcess(build)


def per_process_by(key: Callable[P, Hashable]) -> Callable[[Callable[P, T]], PerProcess[P, T]]:
    """`per_process`, one object per `key(*arguments)` rather than per the arguments themselves
    (a Docker client is new on every call; the daemon it talks to is what tells two apart)."""

    def decorate(build: Callable[P, T]) -> PerProcess[P, T]:
        return PerProcess(build, key)

    return decorate


def _forget_all_in_child() -> None:
    for accessor in list(_accessors):
        accessor._forget_in_child()


os.register_at_fork(after_in_child=_forget_all_in_child)
