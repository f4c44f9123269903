"""ContextClient: what a gateway calls before its LLM call; reads Redis only, never an LLM."""

from __future__ import annotations

import asyncio
import time
from types import TracebackType

from turnstream.client.reads import WaitResult, gateway_semantic, search_owner, session_and_owner
from turnstream.prompt.assemble import Prompt
from turnstream.redis.memories import MemoryStore
from turnstream.redis.reader import ContextReader
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings
from turnstream.tracing import span

WAIT_READS = 8
"""Reads that wait_for calls of one client run at once: with the one shared subscription, the connections
all its waits use stay this many plus one, however many waits there are."""


class ContextClient:
    """Reads a session's compacted context from Redis."""

    def __init__(self, store: ContextReader, memory: MemoryStore | None = None) -> None:
        self.store = store
        self.memory = memory
        """Needed by build_prompt only; from_settings builds one on the same connection pool."""
        self._wait_reads = asyncio.Semaphore(WAIT_READS)

    @classmethod
    def from_settings(cls, settings: Settings) -> ContextClient:
        store = ContextReader.from_settings(settings)
        return cls(store, MemoryStore(store.redis, settings, gateway_semantic(settings)))

    @classmethod
    def from_url(cls, redis_url: str, topic_prefix: str = "turnstream") -> ContextClient:
        """A client on `redis_url` reading the contexts written under `topic_prefix`."""
        return cls.from_settings(Settings(redis_url=redis_url, topic_prefix=topic_prefix))

    async def get(self, session_id: str, tenant: str | None = None, user_id: str | None = None) -> ContextDoc | None:
        """The session's current context, in one round trip with `user_id` (two without); None when it has none."""
        return await self.store.read(*session_and_owner(session_id, tenant, user_id))

    async def wait_for(
        self, session_id: str, turn_id: str, timeout: float, tenant: str | None = None, user_id: str | None = None
    ) -> WaitResult:
        """The context once it includes `turn_id`, or after `timeout` seconds the latest one with fresh=False."""
        key, owner = session_and_owner(session_id, tenant, user_id)
        deadline = time.monotonic() + timeout
        # subscribed before the first read: an update landing between the two is still seen
        async with self.store.updates(key) as updates:
            doc, included = await self._read_including(key, owner, turn_id)
            while not included and (remaining := deadline - time.monotonic()) > 0:
                if await updates.next(remaining) is None:
                    break
                doc, included = await self._read_including(key, owner, turn_id)
        if not included:
            # the last look: whatever landed since the last notification, however late
            doc, included = await self._read_including(key, owner, turn_id)
        return WaitResult(doc, included)

    async def _read_including(self, key: str, owner: str | None, turn_id: str) -> tuple[ContextDoc | None, bool]:
        # waits wake together (a thousand at once for a busy gateway): their reads take turns on a few connections
        async with self._wait_reads:
            return await self.store.read_including(key, owner or await self.store.owner_of(key), turn_id)

    async def build_prompt(
        self,
        session_id: str,
        user_text: str,
        k: int | None = None,
        tenant: str | None = None,
        user_id: str | None = None,
        record: bool = True,
        budget_tokens: int | None = None,
    ) -> Prompt:
        """The prompt for the session's next model call, in one Redis round trip and no LLM call.

        Memories and recalled turns are those of `user_id` (as `tenant:user_id`); without one, the
        session's owner is looked up first (a second round trip). `k` (typed memories) defaults to
        settings.recall_k; `record=False` looks without counting anything against the dedup window (a session
        without a context, new or erased, is only looked at either way: the prompt creates nothing);
        `budget_tokens` replaces settings.prompt_budget_tokens for this prompt.
        """
        key, owner = session_and_owner(session_id, tenant, user_id)
        with span("turnstream.build_prompt", {"db.system": "redis", "turnstream.session": key}):
            return await self._memory("build_prompt").build_prompt(
                key, owner or await self.store.owner_of(key), user_text, k, record, budget_tokens
            )

    async def search(
        self,
        text: str,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        tenant: str | None = None,
        k: int | None = None,
        budget_tokens: int | None = None,
    ) -> Prompt:
        """What recall finds for `text` among the memories and archived turns of `user_id` (as `tenant:user_id`), or
        with `session_id` and no user of that session's own, in one round trip; records nothing (MemoryStore.search,
        as `turnstream memory search`). `k` (typed memories) defaults to settings.recall_k; `budget_tokens` bounds
        the memory block the memories and turns fill (default settings.recall_budget_tokens)."""
        return await self._memory("search").search(search_owner(user_id, session_id, tenant), text, k, budget_tokens)

    def _memory(self, call: str) -> MemoryStore:
        if self.memory is None:
            raise RuntimeError(f"{call} needs a MemoryStore: ContextClient(store, memory) or from_settings()")
        return self.memory

    async def aclose(self) -> None:
        await self.store.aclose()

    async def __aenter__(self) -> ContextClient:
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        await self.aclose()
