"""Exponential backoff with jitter, interruptible by a cancel event."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 4  # extra attempts after the first one
    initial_delay: float = 0.5
    max_delay: float = 20.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (0-based). "Equal
        jitter": half fixed, half random, so clients that failed together
        do not retry in lockstep. A server's Retry-After wins when sane."""
        if retry_after is not None and 0 <= retry_after <= self.max_delay:
            return retry_after
        ceiling = min(self.max_delay, self.initial_delay * (2**attempt))
        return ceiling / 2 + random.uniform(0, ceiling / 2)  # noqa: S311 - jitter, not secrecy


def wait_or_cancelled(seconds: float, cancel: threading.Event | None) -> bool:
    """Sleep; True when the cancel event was set meanwhile."""
    if cancel is None:
        threading.Event().wait(seconds)
        return False
    return cancel.wait(seconds)
