"""ContextClient: what a gateway calls before its LLM call; reads Redis only, never an LLM."""

from __future__ import annotations

import asyncio
import time
from types import TracebackType
from typing import TYPE_CHECKING

from turnstream.client import reads
from turnstream.prompt.assemble import Prompt
from turnstream.prompt.semantic import Semantic
from turnstream.redis.aio import run
from turnstream.redis.memory_store import MemoryStore
from turnstream.redis.reader import ContextReader
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings
from turnstream.tracing import span

if TYPE_CHECKING:
    from redis.asyncio import Redis

WAIT_READS = 8
"""Reads that wait_for calls of one client run at once: with the one shared subscription, the connections
all its waits use stay this many plus one, however many waits there are."""


class GatewayMemory(MemoryStore):
    """A gateway's MemoryStore: the store, and the one prompt read (prompt/read.py) run on its connection pool by
    the asyncio executor, for the HTTP API, the MCP server and the inspector, which name the owner themselves."""

    def __init__(self, redis: Redis, settings: Settings, semantic: Semantic | None = None) -> None:
        super().__init__(redis, settings)
        self.semantic = semantic
        """The reader's side of the semantic share (prompt/semantic.py); None reads lexically only."""

    async def build_prompt(
        self,
        session_key: str,
        owner: str,
        user_text: str,
        k: int | None = None,
        record: bool = True,
        budget_tokens: int | None = None,
        provenance: bool = False,
    ) -> Prompt:
        """The prompt for the next model call of session `session_key` of `owner`, in one round trip (prompt/read.py's
        build_prompt says what `record`, `budget_tokens` and `provenance` do)."""
        read = reads.prompt_read(
            self.layout,
            self.settings,
            self.semantic,
            session_key,
            owner,
            user_text,
            k,
            record,
            budget_tokens,
            provenance,
        )
        return await run(self.redis, read)

    async def search(self, owner: str, text: str, k: int | None = None, budget_tokens: int | None = None) -> Prompt:
        """What recall finds for `text` among `owner`'s memories and archived turns (`turnstream memory search`, the
        HTTP API's and the MCP server's search), in one round trip; nothing is recorded against any dedup window."""
        return await run(
            self.redis, reads.search_read(self.layout, self.settings, self.semantic, owner, text, k, budget_tokens)
        )


class ContextClient:
    """Reads a session's compacted context from Redis."""

    def __init__(self, store: ContextReader, memory: MemoryStore | None = None) -> None:
        self.store = store
        self.memory = (
            memory
            if memory is None or isinstance(memory, GatewayMemory)
            else GatewayMemory(memory.redis, memory.settings)
        )
        """Needed by build_prompt and search only; from_settings builds one on the same connection pool, with the
        semantic share; a plain MemoryStore given here reads lexically."""
        self._wait_reads = asyncio.Semaphore(WAIT_READS)

    @classmethod
    def from_settings(cls, settings: Settings) -> ContextClient:
        store = ContextReader.from_settings(settings)
        return cls(store, GatewayMemory(store.redis, settings, reads.gateway_semantic(settings)))

    @classmethod
    def from_url(cls, redis_url: str, topic_prefix: str = "turnstream") -> ContextClient:
        """A client on `redis_url` reading the contexts written under `topic_prefix`."""
        return cls.from_settings(Settings(redis_url=redis_url, topic_prefix=topic_prefix))

    async def get(self, session_id: str, tenant: str | None = None, user_id: str | None = None) -> ContextDoc | None:
        """The session's current context, in one round trip with `user_id` (two without); None when it has none."""
        return await self.store.read(*reads.session_and_owner(session_id, tenant, user_id))

    async def wait_for(
        self, session_id: str, turn_id: str, timeout: float, tenant: str | None = None, user_id: str | None = None
    ) -> reads.WaitResult:
        """The context once it includes `turn_id`, or after `timeout` seconds the latest one with fresh=False."""
        key, owner = reads.session_and_owner(session_id, tenant, user_id)
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
        return reads.WaitResult(doc, included)

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
        provenance: bool = False,
    ) -> Prompt:
        """The prompt for the session's next model call, in one Redis round trip and no LLM call.

        Memories and recalled turns are those of `user_id` (as `tenant:user_id`); without one, the
        session's owner is looked up first (a second round trip). `k` (typed memories) defaults to
        settings.recall_k; `record=False` looks without counting anything against the dedup window (a session
        without a context, new or erased, is only looked at either way: the prompt creates nothing);
        `budget_tokens` replaces settings.prompt_budget_tokens for this prompt; `provenance=True` adds, per message,
        what it was drawn from (`Prompt.sources`: turns by position, facts, the summarized span, memories, archived
        turns with their recall scores), computed from what the read already holds.
        """
        key, owner = reads.session_and_owner(session_id, tenant, user_id)
        with span("turnstream.build_prompt", {"db.system": "redis", "turnstream.session": key}):
            return await self._memory("build_prompt").build_prompt(
                key, owner or await self.store.owner_of(key), user_text, k, record, budget_tokens, provenance
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
        with `session_id` and no user of that session's own, in one round trip; records nothing (GatewayMemory.search,
        as `turnstream memory search`). `k` (typed memories) defaults to settings.recall_k; `budget_tokens` bounds
        the memory block the memories and turns fill (default settings.recall_budget_tokens)."""
        return await self._memory("search").search(
            reads.search_owner(user_id, session_id, tenant), text, k, budget_tokens
        )

    def _memory(self, call: str) -> GatewayMemory:
        if self.memory is None:
            raise RuntimeError(f"{call} needs a MemoryStore: ContextClient(store, memory) or from_settings()")
        return self.memory

    async def aclose(self) -> None:
        await self.store.aclose()

    async def __aenter__(self) -> ContextClient:
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        await self.aclose()
