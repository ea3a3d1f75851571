"""How many run websockets one person and one address may hold open, across every web process.

Each open socket is a member of two Redis sorted sets (its person's and its
address's) scored by when it last proved alive; a socket refreshes its score
while open and leaves on disconnect. Members not refreshed for a while belong
to a process that died, and are pruned before counting, so a crash never
locks anybody out for longer than that. When Redis cannot be reached the
limit is not enforced (the stream itself still works from the database).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

import redis.asyncio as aioredis
from django.conf import settings
from redis.exceptions import RedisError

from sandboxes.per_process import per_process

log = logging.getLogger(__name__)
KEY_PREFIX = "atelier:run-sockets"


@dataclass(frozen=True)
class SlotRefusal:
    message: str


def _client() -> aioredis.Redis:
    # One client per event loop: a connection pool belongs to the loop that made it.
    return _client_of_loop(id(asyncio.get_running_loop()))


@per_process
def _client_of_loop(loop_id: int) -> aioredis.Redis:
    return aioredis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)


class SocketSlots:
    """The slots of one websocket: taken on connect, refreshed while open, given back on disconnect."""

    def __init__(self, *, socket_id: str, user_id: int | None, address: str) -> None:
        self.socket_id = socket_id
        self.keys: list[tuple[str, int]] = [(f"{KEY_PREFIX}:address:{address}", settings.RUN_WS_MAX_PER_ADDRESS)]
        if user_id:
            self.keys.append((f"{KEY_PREFIX}:user:{user_id}", settings.RUN_WS_MAX_PER_USER))
        self.taken = False

    @staticmethod
    def _stale_before() -> float:
        return time.time() - settings.RUN_WS_SLOT_STALE_SECONDS

    async def take(self) -> SlotRefusal | None:
        """Join both sets, or none of them and say why."""
        now = time.time()
        try:
            async with _client().pipeline(transaction=True) as pipe:
                for key, _ in self.keys:
                    pipe.zremrangebyscore(key, "-inf", self._stale_before())
                    pipe.zadd(key, {self.socket_id: now})
                    pipe.zcard(key)
                    pipe.expire(key, int(settings.RUN_WS_SLOT_STALE_SECONDS) + 1)
                results = await pipe.execute()
        except (RedisError, OSError) as error:
            log.warning("Run websockets: not counting connections, Redis is unavailable (%s)", error)
            return None
        counts = results[2::4]
        for (key, limit), count in zip(self.keys, counts, strict=True):
            if int(count) > limit:
                await self._leave()
                who = "this address" if ":address:" in key else "you"
                return SlotRefusal(f"Too many live run pages are open from {who} (at most {limit}).")
        self.taken = True
        return None

    async def refresh(self) -> None:
        if not self.taken:
            return
        try:
            async with _client().pipeline(transaction=False) as pipe:
                for key, _ in self.keys:
                    pipe.zadd(key, {self.socket_id: time.time()}, xx=True)
                    pipe.expire(key, int(settings.RUN_WS_SLOT_STALE_SECONDS) + 1)
                await pipe.execute()
        except (RedisError, OSError):
            pass  # counted as stale later; the limit errs on the side of letting people in

    async def give_back(self) -> None:
        if self.taken:
            self.taken = False
            await self._leave()

    async def _leave(self) -> None:
        try:
            async with _client().pipeline(transaction=False) as pipe:
                for key, _ in self.keys:
                    pipe.zrem(key, self.socket_id)
                await pipe.execute()
        except (RedisError, OSError):
            pass
