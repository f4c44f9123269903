"""ContextStore: versioned context documents in Redis, laid out under their owner's hash tag (schemas/keys.py)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from importlib.resources import files
from typing import AsyncIterator, Iterable

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from turnstream.client.reads import doc_from, owner_from
from turnstream.client.updates import UpdateHub, Watch
from turnstream.connections import redis_client
from turnstream.memory.scripts import queue_script, run_pipeline
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.keys import KeyLayout, SessionKeys, session_owner
from turnstream.settings import Settings

_WRITE_SCRIPT = files("turnstream.client").joinpath("lua", "write_context.lua").read_text()


class ContextStore:
    """Versioned context documents in Redis: compare-and-set writes, one-round-trip reads."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.layout = KeyLayout(settings.topic_prefix)
        self._ttl = settings.session_ttl_seconds
        self._window = settings.dedup_window
        self._write = redis.register_script(_WRITE_SCRIPT)  # EVALSHA, loaded on first use
        self._hub = UpdateHub(redis)

    @classmethod
    def from_settings(cls, settings: Settings) -> ContextStore:
        if not settings.redis_url:
            raise ValueError("no Redis configured (TURNSTREAM_REDIS_URL)")
        return cls(redis_client(settings), settings)

    def keys(self, owner: str, session_key: str) -> SessionKeys:
        return self.layout.session(owner, session_key)

    async def queue_write(self, pipe: Pipeline, doc: ContextDoc, applied_turn_ids: Iterable[str] = (), owner: str | None = None) -> None:
        """Add to `pipe` the compare-and-set of `doc` (a no-op unless newer) and the session's owner pointer.

        `owner` defaults to the session itself (keys.session_owner), the owner of a session without a user.
        """
        owner = owner or session_owner(doc.session_key)
        keys = self.keys(owner, doc.session_key)
        args: list[str | bytes | int] = [doc.version, doc.to_json(), doc.last_turn_id, self._ttl, self._window, keys.updates, *applied_turn_ids]
        await queue_script(self._write, pipe, [keys.context, keys.applied], args)
        pipe.set(self.layout.owner_pointer(doc.session_key), owner, ex=self._ttl)

    async def write(self, doc: ContextDoc, applied_turn_ids: Iterable[str] = (), owner: str | None = None) -> bool:
        """Store `doc` unless the stored version is as new or newer; True when written."""
        written, _ = await run_pipeline(self.redis, lambda pipe: self.queue_write(pipe, doc, applied_turn_ids, owner))
        return bool(written)

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
        store shares one pub/sub connection."""
        async with self._hub.watch(self.layout.updates_channel(session_key)) as watch:
            yield watch

    async def aclose(self) -> None:
        await self._hub.aclose()
        await self.redis.aclose()
