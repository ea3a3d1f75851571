"""The shared `ratelimit` cache (config/redis_cache.py) against a real Redis: it counts as
Django's own Redis cache does, builds one Redis client per connection pool instead of one per
call, and carries on after its Redis restarts."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.core.cache import caches

from devstack.redis_server import RedisServer


@pytest.fixture
def restartable_redis(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path) as server:
        yield server


@pytest.fixture
def counting_in(settings: Any, restartable_redis: RedisServer) -> str:
    """The platform's `ratelimit` cache, as configured, on this test's Redis."""
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {**settings.CACHES["ratelimit"], "LOCATION": restartable_redis.url},
    }
    return restartable_redis.url


@pytest.fixture
def clients_built(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    built: list[object] = []
    original = redis.Redis.__init__

    def counted(self: redis.Redis, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(redis.Redis, "__init__", counted)
    return built


def test_it_counts_as_django_s_redis_cache_does_with_one_client_for_every_call(
    counting_in: str, clients_built: list[object]
) -> None:
    cache = caches["ratelimit"]
    assert cache.add("hits", 1, 60)
    assert not cache.add("hits", 5, 60)
    for _ in range(99):
        cache.incr("hits")
    cache.set("note", {"said": "hello"}, 60)

    assert cache.get("hits") == 100
    assert cache.get("note") == {"said": "hello"}
    assert cache.get("missing", "default") == "default"
    assert len(clients_built) == 1  # Django's own backend builds one per call: 105 here
    # What the cache wrote is in Redis itself, under the platform's prefix, with its expiry.
    direct = redis.Redis.from_url(counting_in, decode_responses=True)
    [key] = direct.keys("*hits*")
    assert isinstance(key, str)
    assert key.startswith("atelier-ratelimit")
    assert 0 < direct.ttl(key) <= 60


def test_threads_count_into_one_total(counting_in: str) -> None:
    caches["ratelimit"].set("hits", 0, 60)

    def count() -> None:
        for _ in range(50):
            caches["ratelimit"].incr("hits")

    threads = [threading.Thread(target=count) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert caches["ratelimit"].get("hits") == 200


def test_it_carries_on_after_its_redis_restarts(counting_in: str, restartable_redis: RedisServer) -> None:
    cache = caches["ratelimit"]
    cache.set("before", 1, 60)
    restartable_redis.restart()

    assert cache.get("before") is None  # a restart keeps no keys (no persistence)
    assert cache.add("after", 1, 60)
    assert cache.get("after") == 1
