"""An overall deadline for calls to a model endpoint, on top of the per-operation timeouts.

A timeout bounds one socket operation (a connect, one read); a server that sends a byte every
few seconds satisfies every read and can hold the caller for as long as it likes. Inside
`overall_deadline(seconds)`, each operation of the endpoint transport's connections
(`endpoint_addresses.GuardedNetworkBackend`) waits at most until the deadline, and one started
after it fails at once, as the timeout of its kind: the HTTP client then ends the call as a
timeout, which `deadline_passed()` tells apart from a plain one.

The deadline belongs to the calling thread's context, not to a connection, so a kept-alive
connection of the shared pool is bounded only while a caller with a deadline uses it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore2

_deadline: ContextVar[float | None] = ContextVar("model_endpoint_deadline", default=None)


@contextmanager
def overall_deadline(seconds: float) -> Iterator[None]:
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def deadline_passed() -> bool:
    deadline = _deadline.get()
    return deadline is not None and time.monotonic() >= deadline


def bounded(timeout: float | None, expired: type[Exception]) -> float | None:
    """`timeout` for one operation, cut to what is left of the deadline; `expired` once none is."""
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the overall deadline of this call has passed")
    return left if timeout is None else min(timeout, left)


class DeadlineBoundStream(httpcore2.NetworkStream):
    """A connection whose every operation ends by the deadline of whoever uses it."""

    def __init__(self, stream: httpcore2.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, bounded(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, bounded(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        tls = self._stream.start_tls(ssl_context, server_hostname, bounded(timeout, httpcore2.ConnectTimeout))
        return DeadlineBoundStream(tls)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)
