"""Which worker hosts are alive, and whether their sandbox engine works.

Each worker process claims, every SANDBOX_HOST_BEAT_SECONDS, that its host is
alive, with what it found of its engine (sandboxes.host_keeper). A claim is a
Redis key that expires after a few beats, so a host that dies (SIGKILL, power)
drops out on its own, with nobody left to say so. Redis, not the database:
presence is transient and written often, and every worker and web process
already reaches Redis.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass

import redis
from django.conf import settings

log = logging.getLogger(__name__)

KEY_PREFIX = "atelier:sandbox-worker:"
# A claim outlives this many missed beats: one slow beat does not make a host look dead.
BEATS_PER_CLAIM = 3
# Read at most this many claims (a SCAN is linear in the keys it visits).
MAX_CLAIMS_READ = 1000


@dataclass(frozen=True)
class WorkerClaim:
    """One worker process's word on its host."""

    host_id: str
    worker: str  # which process says so (node name and pid)
    engine_ok: bool
    problem: str  # why the engine cannot start sandboxes; empty when it can
    seen_at: float  # Unix time of the claim


@dataclass(frozen=True)
class HostStatus:
    host_id: str
    workers: int
    engine_ok: bool
    problem: str


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def _key(claim_host: str, worker: str) -> str:
    return f"{KEY_PREFIX}{claim_host}/{worker}"


def claim_alive(claim: WorkerClaim) -> None:
    """Store the claim for a few beats (raises redis.RedisError when Redis is away)."""
    ttl = max(1, round(settings.SANDBOX_HOST_BEAT_SECONDS * BEATS_PER_CLAIM))
    client = _client()
    try:
        client.set(_key(claim.host_id, claim.worker), json.dumps(asdict(claim)), ex=ttl)
    finally:
        client.close()


def withdraw(*, host_id: str, worker: str) -> None:
    """A worker stopping cleanly says so at once instead of letting its claim expire."""
    client = _client()
    try:
        client.delete(_key(host_id, worker))
    finally:
        client.close()


def _read_claims() -> list[WorkerClaim]:
    client = _client()
    try:
        keys = []
        for key in client.scan_iter(match=f"{KEY_PREFIX}*", count=200):
            keys.append(key)
            if len(keys) >= MAX_CLAIMS_READ:
                break
        values = client.mget(keys) if keys else []
    finally:
        client.close()
    claims = []
    for value in values:
        if value is None:  # expired between the scan and the read
            continue
        try:
            claims.append(WorkerClaim(**json.loads(value)))
        except (TypeError, ValueError):
            log.warning("Ignoring a worker claim that is not ours: %.200r", value)
    return claims


def alive_hosts() -> list[HostStatus]:
    """The hosts some worker has claimed alive lately, by id. A host's engine
    counts as working when any of its workers found it working."""
    by_host: dict[str, list[WorkerClaim]] = {}
    for claim in _read_claims():
        by_host.setdefault(claim.host_id, []).append(claim)
    hosts = []
    for host_id, claims in sorted(by_host.items()):
        working = [claim for claim in claims if claim.engine_ok]
        problem = "" if working else max(claims, key=lambda claim: claim.seen_at).problem
        hosts.append(HostStatus(host_id=host_id, workers=len(claims), engine_ok=bool(working), problem=problem))
    return hosts
