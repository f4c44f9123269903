"""ContextWriter: the worker's compare-and-set writes of context documents, beside the reader it holds.

The writer composes the SDK's ContextReader (redis/reader.py) rather than being one: a gateway imports the
reader alone, and the worker's write path is one small class over the same client and key layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Self

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from turnstream.redis.aio import load_script, queue_script, run_pipeline
from turnstream.redis.reader import ContextReader
from turnstream.redis.scripts import WRITE_CONTEXT
from turnstream.schemas.context import ContextDoc, EncodedContext
from turnstream.schemas.ids import session_owner
from turnstream.settings import Settings


class ContextWriter:
    """Versioned context documents in Redis: compare-and-set writes; `reader` reads them back."""

    def __init__(self, reader: ContextReader, settings: Settings) -> None:
        self.reader = reader
        self.redis = reader.redis
        self.layout = reader.layout
        self._ttl = settings.session_ttl_seconds
        self._window = settings.dedup_window
        self._write = load_script(reader.redis, WRITE_CONTEXT)  # EVALSHA, loaded on first use

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(ContextReader.from_settings(settings), settings)

    @classmethod
    def on(cls, redis: Redis, settings: Settings) -> Self:
        """A writer (and its reader) on an existing client."""
        return cls(ContextReader(redis, settings), settings)

    async def queue_write(
        self,
        pipe: Pipeline,
        doc: ContextDoc | EncodedContext,
        applied_turn_ids: Iterable[str] = (),
        owner: str | None = None,
    ) -> None:
        """Add to `pipe` the compare-and-set of `doc` (a no-op unless newer) and the session's owner pointer.

        `owner` defaults to the session itself (ids.session_owner), the owner of a session without a user.
        """
        owner = owner or session_owner(doc.session_key)
        keys = self.layout.session(owner, doc.session_key)
        await queue_script(
            self._write,
            pipe,
            WRITE_CONTEXT.call(
                context=keys.context,
                applied=keys.applied,
                version=doc.version,
                doc=doc.to_json(),
                last_turn_id=doc.last_turn_id,
                ttl=self._ttl,
                dedup_window=self._window,
                updates=keys.updates,
                turn_ids=list(applied_turn_ids),
            ),
        )
        pipe.set(self.layout.owner_pointer(doc.session_key), owner, ex=self._ttl)

    async def write(
        self, doc: ContextDoc | EncodedContext, applied_turn_ids: Iterable[str] = (), owner: str | None = None
    ) -> bool:
        """Store `doc` unless the stored version is as new or newer; True when written."""
        written, _ = await run_pipeline(self.redis, lambda pipe: self.queue_write(pipe, doc, applied_turn_ids, owner))
        return bool(written)

    async def write_many(self, writes: Sequence[tuple[ContextDoc | EncodedContext, Iterable[str], str | None]]) -> int:
        """`write` of each (doc, applied turn ids, owner), in one round trip; how many were newer and written."""

        async def queue(pipe: Pipeline) -> None:
            for doc, applied, owner in writes:
                await self.queue_write(pipe, doc, applied, owner)

        replies = await run_pipeline(self.redis, queue) if writes else []
        return sum(1 for reply in replies[::2] if reply)  # each write is the script's reply, then the pointer's SET

    async def pointed(self, session_keys: Sequence[str]) -> list[bool]:
        """Per session, whether Redis still holds its owner pointer (lost with a FLUSHALL or a restart without data)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in session_keys:
                pipe.exists(self.layout.owner_pointer(key))
            return [bool(present) for present in await pipe.execute()]

    async def stored_versions(self, sessions: Sequence[tuple[str, str]]) -> list[tuple[int, bool]]:
        """Per (session key, owner): the version of the context Redis holds (0 for none) and whether it holds the
        session's owner pointer, in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key, owner in sessions:
                pipe.hget(self.layout.session(owner, key).context, "version")
                pipe.exists(self.layout.owner_pointer(key))
            replies = await pipe.execute()
        return [(int(version or 0), bool(pointed)) for version, pointed in zip(replies[::2], replies[1::2])]

    async def verified(self, partitions: Sequence[int]) -> dict[int, str | None]:
        """Per turns partition, the replication id its contexts were last found whole under (None: never here)."""
        if not partitions:
            return {}
        marks = await self.redis.hmget(self.layout.contexts_verified(), [str(p) for p in partitions])
        return {p: mark.decode() if isinstance(mark, bytes) else mark for p, mark in zip(partitions, marks)}

    async def mark_verified(self, partitions: Iterable[int], replication_id: str) -> None:
        """Note that the contexts of `partitions` were found whole under `replication_id`."""
        if marks := [field for p in partitions for field in (str(p), replication_id)]:
            await self.redis.hset(self.layout.contexts_verified(), items=marks)

    async def mark_forgotten(self, requested: Mapping[str, float], lifetime: int) -> None:
        """Set each erased session's forget marker to when its erasure was asked, for `lifetime` seconds: what tells
        `turnstream forget` that the session's worker dropped its row."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key, requested_at in requested.items():
                pipe.set(self.layout.forgotten(key), repr(requested_at), ex=lifetime)
            await pipe.execute()

    async def aclose(self) -> None:
        await self.reader.aclose()
