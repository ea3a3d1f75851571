"""Following a run's events (the API's event stream reads them so): through quiet spells its place
on the channel layer is kept, not dropped and taken again each time; when it ends it leaves the
layer as it found it; and a channel layer that hangs while letting go cannot silence the stream.
Against the platform's own channel layer on a real Redis, and a database read from other threads
(as daphne's are), so the rows are committed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import pytest
import redis
from channels.layers import get_channel_layer
from channels_redis.pubsub import RedisSingleShardConnection
from django.conf import settings

from creations.events import follow as following
from creations.events.follow import follow_run_events
from creations.events.store import store_events
from creations.models import Run, RunStatus
from creations.runs.state import run_finish
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db(transaction=True)

IDLE = 0.1


@pytest.fixture
def running(team: Team) -> Run:
    return make_run(team, status=RunStatus.RUNNING)


@pytest.fixture
def layer_redis() -> Iterator[redis.Redis]:
    layer: dict[str, Any] = settings.CHANNEL_LAYERS[settings.RUN_CHANNEL_LAYER]
    (host,) = layer["CONFIG"]["hosts"]
    client = redis.Redis.from_url(host)
    yield client
    client.close()


def _subscribed(client: redis.Redis) -> set[bytes | str]:
    return set(client.pubsub_channels())


def _command_calls(client: redis.Redis, command: str) -> int:
    stats = client.info("commandstats").get(f"cmdstat_{command}")
    return int(stats["calls"]) if stats else 0


async def _next(events: AsyncGenerator[dict[str, Any] | None], within: float) -> dict[str, Any] | None:
    return await asyncio.wait_for(anext(events), timeout=within)


def _finish(run: Run) -> None:
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="Submitted.")


def test_quiet_spells_keep_the_followers_place_on_the_layer(running: Run, layer_redis: redis.Redis) -> None:
    async def follow() -> tuple[int, int]:
        events = follow_run_events(run_id=running.pk, after=0, idle_seconds=IDLE, hidden=())
        assert await _next(events, within=5) is None  # joined, read, and quiet
        subscribes, unsubscribes = _command_calls(layer_redis, "subscribe"), _command_calls(layer_redis, "unsubscribe")
        for _ in range(5):
            assert await _next(events, within=5) is None
        churn = (
            _command_calls(layer_redis, "subscribe") - subscribes,
            _command_calls(layer_redis, "unsubscribe") - unsubscribes,
        )
        await events.aclose()
        return churn

    assert asyncio.run(follow()) == (0, 0)


@pytest.mark.parametrize("ends", ["announced while following", "already stored when read"])
def test_a_follower_that_ends_leaves_the_layer_as_it_found_it(
    running: Run, layer_redis: redis.Redis, ends: str
) -> None:
    async def follow() -> tuple[list[dict[str, Any] | None], set[bytes | str], set[bytes | str]]:
        layer = get_channel_layer(settings.RUN_CHANNEL_LAYER)
        assert layer is not None
        await layer.group_send("nobody", {"type": "warm.up"})  # the layer's connection, opened before counting
        before = _subscribed(layer_redis)
        if ends == "already stored when read":
            await asyncio.to_thread(_finish, running)
        seen = []
        async for event in follow_run_events(run_id=running.pk, after=0, idle_seconds=IDLE, hidden=()):
            seen.append(event)
            if event is None and ends == "announced while following":
                await asyncio.to_thread(_finish, running)
        await asyncio.sleep(0.2)  # the layer lets go of channels on its own task
        return seen, before, _subscribed(layer_redis)

    seen, before, after = asyncio.run(follow())

    final = seen[-1]
    assert final is not None
    assert final["payload"].get("final") is True
    assert after == before


def test_a_layer_that_hangs_while_letting_go_cannot_silence_the_stream(
    running: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis away mid-unsubscribe, say: the follower still says it is alive on time, and ends."""

    async def hangs(self: RedisSingleShardConnection, channel: str) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(RedisSingleShardConnection, "unsubscribe", hangs)
    monkeypatch.setattr(following, "LET_GO_SECONDS", 0.3)  # the bound itself, not its length, is under test

    async def follow() -> tuple[int, float]:
        events = follow_run_events(run_id=running.pk, after=0, idle_seconds=IDLE, hidden=())
        quiet = 0
        for _ in range(4):
            quiet += await _next(events, within=2) is None
        started = time.monotonic()
        await asyncio.wait_for(events.aclose(), timeout=10)
        return quiet, time.monotonic() - started

    quiet, closing = asyncio.run(follow())

    assert quiet == 4
    assert closing < 5


def test_announced_events_are_followed_without_reading_the_database_again(
    running: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each read is two queries on one of daphne's threads, for every open stream: a live run's
    events, each announced with the event inline, are read once, when the follower starts."""
    reads: list[int] = []
    read_page = following._events_page

    async def counted(**kwargs: Any) -> following.EventsPage:
        reads.append(kwargs["after"])
        return await read_page(**kwargs)

    monkeypatch.setattr(following, "_events_page", counted)

    async def follow() -> list[dict[str, Any] | None]:
        events = follow_run_events(run_id=running.pk, after=0, idle_seconds=30, hidden=())
        waiting = asyncio.ensure_future(_next(events, within=10))
        await asyncio.sleep(0.5)  # joined the layer and read: nothing yet
        seen: list[dict[str, Any] | None] = []
        for step in range(1, 6):
            await asyncio.to_thread(store_events, running.pk, [("step_started", {"step": step, "remaining": 9})])
            seen.append(await waiting if step == 1 else await _next(events, within=10))
        await asyncio.to_thread(_finish, running)
        seen.extend([event async for event in events])
        return seen

    seen = asyncio.run(follow())

    assert [event["seq"] for event in seen if event is not None] == [1, 2, 3, 4, 5, 6]
    assert reads == [0]
