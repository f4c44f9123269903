"""Marks of the jobs one worker of a deployment runs over the memory journal: a lock the one worker doing it holds,
and a mark that the job is done for this Redis (agents/memory_resync.py replays the journal into a Redis that lost
it; agents/reembed.py re-embeds the archive for a changed model)."""

from __future__ import annotations

import uuid

from redis.asyncio import Redis

from turnstream.redis.keys import KeyLayout

LOCK_SECONDS = 600
"""A job lock's lifetime, renewed as the job goes: a worker that dies mid-job frees it this late at most."""


class JobLock:
    """One worker's lock of a job: taken, renewed, and checked before the job is marked done."""

    def __init__(self, redis: Redis, key: str, done: str) -> None:
        self.redis, self.key, self.done_key, self.token = redis, key, done, uuid.uuid4().hex

    async def take(self) -> bool:
        return bool(await self.redis.set(self.key, self.token, nx=True, ex=LOCK_SECONDS))

    async def renew(self) -> None:
        await self.redis.set(self.key, self.token, xx=True, ex=LOCK_SECONDS)

    async def still_held(self) -> bool:
        """False when Redis lost the lock meanwhile (lost its data again): the job must not be marked done."""
        return (await self.redis.get(self.key)) == self.token.encode()

    async def release(self) -> None:
        if await self.still_held():
            await self.redis.delete(self.key)

    async def done(self) -> str | None:
        """The job's done mark in this Redis, if it has one."""
        value = await self.redis.get(self.done_key)
        return value.decode() if isinstance(value, bytes) else value

    async def mark_done(self, value: str) -> None:
        await self.redis.set(self.done_key, value)


def replay_lock(redis: Redis, layout: KeyLayout) -> JobLock:
    """The journal replay's: done once this Redis has had the journal in the current archive layout."""
    return JobLock(redis, layout.journal_lock(), layout.journal_replayed())


def reindex_lock(redis: Redis, layout: KeyLayout) -> JobLock:
    """The archive re-embedding's: done for the model tags its mark names."""
    return JobLock(redis, layout.embedding_lock(), layout.embedding_models())
