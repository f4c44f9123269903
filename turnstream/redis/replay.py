"""The memory journal's replay marks in Redis: the lock of the one worker replaying it, and the mark that this
Redis has had it (agents/memory_resync.py replays; memory/journal.py says what it holds)."""

from __future__ import annotations

import uuid

from redis.asyncio import Redis

from turnstream.redis.keys import KeyLayout

LOCK_SECONDS = 600
"""The replay lock's lifetime, renewed per partition: a worker that dies mid-replay frees it this late at most."""


class ReplayLock:
    """The replay lock of one worker: taken, renewed, and checked before the replay is declared complete."""

    def __init__(self, redis: Redis, layout: KeyLayout) -> None:
        self.redis, self.layout, self.key, self.token = redis, layout, layout.journal_lock(), uuid.uuid4().hex

    async def take(self) -> bool:
        return bool(await self.redis.set(self.key, self.token, nx=True, ex=LOCK_SECONDS))

    async def renew(self) -> None:
        await self.redis.set(self.key, self.token, xx=True, ex=LOCK_SECONDS)

    async def still_held(self) -> bool:
        """False when Redis lost the lock meanwhile (lost its data again): the replay must not be called complete."""
        return (await self.redis.get(self.key)) == self.token.encode()

    async def release(self) -> None:
        if await self.still_held():
            await self.redis.delete(self.key)

    async def replayed(self) -> bool:
        """Whether this Redis has had the journal replayed in the current archive layout."""
        return bool(await self.redis.exists(self.layout.journal_replayed()))

    async def mark_replayed(self, at: float) -> None:
        await self.redis.set(self.layout.journal_replayed(), repr(at))
