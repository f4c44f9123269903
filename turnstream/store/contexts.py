"""ContextStore: versioned context documents in Redis, laid out under their owner's hash tag (schemas/keys.py).

The worker's writer: compare-and-set writes; the reads are the SDK's (client/contexts.py, ContextReader).
"""

from __future__ import annotations

from typing import Iterable

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from turnstream.client.contexts import ContextReader
from turnstream.memory.scripts import load_script, queue_script, run_pipeline
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.keys import session_owner
from turnstream.schemas.scripts import WRITE_CONTEXT
from turnstream.settings import Settings


class ContextStore(ContextReader):
    """Versioned context documents in Redis: compare-and-set writes, one-round-trip reads."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        super().__init__(redis, settings)
        self._ttl = settings.session_ttl_seconds
        self._window = settings.dedup_window
        self._write = load_script(redis, WRITE_CONTEXT)  # EVALSHA, loaded on first use

    async def queue_write(self, pipe: Pipeline, doc: ContextDoc, applied_turn_ids: Iterable[str] = (), owner: str | None = None) -> None:
        """Add to `pipe` the compare-and-set of `doc` (a no-op unless newer) and the session's owner pointer.

        `owner` defaults to the session itself (keys.session_owner), the owner of a session without a user.
        """
        owner = owner or session_owner(doc.session_key)
        keys = self.keys(owner, doc.session_key)
        await queue_script(self._write, pipe, WRITE_CONTEXT.call(
            context=keys.context, applied=keys.applied, version=doc.version, doc=doc.to_json(), last_turn_id=doc.last_turn_id,
            ttl=self._ttl, dedup_window=self._window, updates=keys.updates, turn_ids=list(applied_turn_ids)))
        pipe.set(self.layout.owner_pointer(doc.session_key), owner, ex=self._ttl)

    async def write(self, doc: ContextDoc, applied_turn_ids: Iterable[str] = (), owner: str | None = None) -> bool:
        """Store `doc` unless the stored version is as new or newer; True when written."""
        written, _ = await run_pipeline(self.redis, lambda pipe: self.queue_write(pipe, doc, applied_turn_ids, owner))
        return bool(written)
