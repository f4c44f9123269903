"""ContextReader: the reads of versioned context documents in Redis, laid out under their owner's hash tag
(schemas/keys.py); the worker writes them (store/contexts.py)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import AsyncIterator, Self

from redis.asyncio import Redis

from turnstream.client.reads import doc_from, owner_from
from turnstream.client.updates import UpdateHub, Watch
from turnstream.connections import redis_client
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.keys import KeyLayout, SessionKeys
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
        return owner_from(await self.redis.get(self.layout.owner_pointer(session_key)), session_key)

    async def read(self, session_key: str, owner: str | None = None) -> ContextDoc | None:
        """The stored context of a session, or None; without `owner` it is looked up first (a second round trip)."""
        owner = owner or await self.owner_of(session_key)
        return doc_from(await self.redis.hget(self.keys(owner, session_key).context, "doc"))

    async def read_including(self, session_key: str, owner: str, turn_id: str) -> tuple[ContextDoc | None, bool]:
        """The stored context and whether it includes `turn_id`, in one round trip."""
        keys = self.keys(owner, session_key)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(keys.context, "doc")
            pipe.zscore(keys.applied, turn_id)
            raw, score = await pipe.execute()
        return doc_from(raw), score is not None

    @asynccontextmanager
    async def updates(self, session_key: str) -> AsyncIterator[Watch]:
        """Watch a session's updates; the subscription is live on the server on entry. Every watch of this
        reader shares one pub/sub connection."""
        async with self._hub.watch(self.layout.updates_channel(session_key)) as watch:
            yield watch

    async def aclose(self) -> None:
        await self._hub.aclose()
        await self.redis.aclose()
