"""Django's Redis cache backend, keeping one Redis client per connection pool.

Django's backend makes a new `redis.Redis` for every cache call. With redis-py 8 that costs about as
much CPU as the command's round trip (the client builds its tables of reply callbacks each time),
and the API pays it on every request: the rate limits make three cache calls each
(api/throttling.py). A client holds no connection of its own (each command borrows one from the
pool), so one client per pool gives the same behaviour. Django keeps a cache backend per thread,
so these clients are never shared between threads either.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class PooledRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # Django's, not in its stubs
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class PooledRedisCache(RedisCache):
    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = PooledRedisCacheClient
