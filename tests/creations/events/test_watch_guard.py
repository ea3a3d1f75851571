"""The clock beside a live run view: slots refreshed and access asked on time, however busy the
stream is, and the first refusal handed over once (the real streams: test_websocket.py and
tests/api/test_event_stream.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from creations.events.socket_slots import SocketSlots
from creations.events.watch_guard import WatchGuard


class CountedSlots:
    def __init__(self) -> None:
        self.refreshed = 0

    async def refresh(self) -> None:
        self.refreshed += 1


@pytest.mark.alone  # measures the gaps between checks: a starved process would stretch them
def test_access_is_asked_on_the_clock_and_the_first_refusal_ends_the_guard(settings: Any) -> None:
    settings.RUN_WS_ACCESS_RECHECK_SECONDS = 0.3
    settings.RUN_WS_POLL_SECONDS = 0.2
    slots = CountedSlots()
    asked: list[float] = []
    lost: list[tuple[str, float]] = []

    async def still_allowed() -> str | None:
        asked.append(time.monotonic())
        return "You can no longer see this run." if len(asked) == 3 else None

    async def on_lost(why: str) -> None:
        lost.append((why, time.monotonic()))

    async def watch() -> float:
        started = time.monotonic()
        guard = WatchGuard(slots=slots, still_allowed=still_allowed, on_lost=on_lost)  # type: ignore[arg-type]
        async with guard:
            for _ in range(150):  # a busy stream: the loop never waits on the guard
                await asyncio.sleep(0.01)
        return started

    started = asyncio.run(watch())

    assert [why for why, _ in lost] == ["You can no longer see this run."]
    assert len(asked) == 3  # nothing asked after the refusal
    gaps = [later - earlier for earlier, later in zip([started, *asked], asked, strict=False)]
    assert all(0.25 < gap < 1.0 for gap in gaps), gaps  # 0.3 s apart, give or take a busy machine
    assert slots.refreshed >= 4


def test_the_guard_stops_with_its_block(settings: Any) -> None:
    settings.RUN_WS_ACCESS_RECHECK_SECONDS = 0.2
    settings.RUN_WS_POLL_SECONDS = 0.2
    asked: list[float] = []

    async def still_allowed() -> str | None:
        asked.append(time.monotonic())
        return None

    async def on_lost(why: str) -> None:
        raise AssertionError(why)

    async def watch() -> None:
        slots: SocketSlots = CountedSlots()  # type: ignore[assignment]
        async with WatchGuard(slots=slots, still_allowed=still_allowed, on_lost=on_lost):
            await asyncio.sleep(0.5)
        count = len(asked)
        await asyncio.sleep(0.5)
        assert len(asked) == count  # no check once the stream is over

    asyncio.run(watch())
    assert len(asked) >= 1
