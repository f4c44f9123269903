"""ContextReader: the reads of versioned context documents in Redis, laid out under their owner's hash tag
(redis/keys.py); the worker's ContextWriter (redis/writer.py) writes them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Self

from redis.asyncio import Redis

from turnstream.redis import reads
from turnstream.redis.aio import execute
from turnstream.redis.connect import redis_client
from turnstream.redis.keys import KeyLayout, SessionKeys
from turnstream.redis.updates import UpdateHub, Watch
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings


class ContextReader:
    """Versioned context documents in Redis, read in one round trip; updates watched on one shared subscription."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.layout = KeyLayout(settings.topic_prefix)
        self._hub = UpdateHub(redis)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        if not settings.redis_url:
            raise ValueError("no Redis configured (TURNSTREAM_REDIS_URL)")
        return cls(redis_client(settings), settings)

    def keys(self, owner: str, session_key: str) -> SessionKeys:
        return self.layout.session(owner, session_key)

    async def owner_of(self, session_key: str) -> str:
        """The session's owner as the worker last wrote it; the session itself when it has none yet."""
        return await execute(self.redis, reads.owner_read(self.layout, session_key))

    async def read(self, session_key: str, owner: str | None = None) -> ContextDoc | None:
        """The stored context of a session, or None; without `owner` it is looked up first (a second round trip)."""
        owner = owner or await self.owner_of(session_key)
        return await execute(self.redis, reads.context_read(self.layout, session_key, owner))

    async def read_including(self, session_key: str, owner: str, turn_id: str) -> tuple[ContextDoc | None, bool]:
        """The stored context and whether it includes `turn_id`, in one round trip."""
        return await execute(self.redis, reads.including_read(self.layout, session_key, owner, turn_id))

    async def forgotten(self, session_key: str) -> bool:
        """Whether the session was erased: its forget marker is set."""
        return await execute(self.redis, reads.forgotten_read(self.layout, session_key))

    @asynccontextmanager
    async def updates(self, session_key: str) -> AsyncIterator[Watch]:
        """Watch a session's updates; the subscription is live on the server on entry. Every watch of this
        reader shares one pub/sub connection."""
        async with self._hub.watch(self.layout.updates_channel(session_key)) as watch:
            yield watch

    async def aclose(self) -> None:
        await self._hub.aclose()
        await self.redis.aclose()
