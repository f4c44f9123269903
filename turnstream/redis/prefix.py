"""Every Redis key under one topic prefix, counted or deleted: a shadow's `status` and `drop`
(operations/shadow.py). `P:` only: the keys of `Px:` are another prefix's."""

from __future__ import annotations

from dataclasses import dataclass

from turnstream.redis.connect import redis_client
from turnstream.redis.keys import parse_context_key
from turnstream.settings import RedisSettings

SCAN_COUNT = 1000
"""Keys a SCAN step asks for when every match is wanted (a prefix's keys, an owner's for an erasure); a list page that
stops early asks for fewer (inspection.SCAN_COUNT)."""
DELETE_BATCH = 500
"""Keys deleted per UNLINK."""


@dataclass(frozen=True)
class PrefixCount:
    keys: int
    """Redis keys under the prefix."""
    contexts: int
    turns_applied: int
    """The sum of its contexts' versions: one per turn applied."""


async def count_prefix(settings: RedisSettings, prefix: str) -> PrefixCount:
    keys = contexts = applied = 0
    redis = redis_client(settings)
    try:
        async for key in redis.scan_iter(match=f"{prefix}:*", count=SCAN_COUNT):
            keys += 1
            if parse_context_key(prefix, key.decode(errors="replace")) is not None:
                contexts += 1
                applied += int(await redis.hget(key, "version") or 0)
    finally:
        await redis.aclose()
    return PrefixCount(keys, contexts, applied)


async def delete_prefix(settings: RedisSettings, prefix: str) -> int:
    """Unlink every key under `prefix`; how many there were."""
    redis = redis_client(settings)
    deleted = 0
    try:
        batch: list[bytes] = []
        async for key in redis.scan_iter(match=f"{prefix}:*", count=SCAN_COUNT):
            batch.append(key)
            if len(batch) >= DELETE_BATCH:
                deleted += await redis.unlink(*batch)
                batch = []
        if batch:
            deleted += await redis.unlink(*batch)
    finally:
        await redis.aclose()
    return deleted
