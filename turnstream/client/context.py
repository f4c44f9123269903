"""ContextClient: what a gateway calls before its LLM call; reads Redis only, never an LLM."""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import TracebackType


from turnstream.client.store import ContextStore
from turnstream.memory import MemoryStore, Prompt, build_prompt, owner_key
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.turn import session_key
from turnstream.settings import Settings


@dataclass(frozen=True, slots=True)
class WaitResult:
    """What wait_for found."""

    doc: ContextDoc | None
    """The latest context of the session (None when it has none yet)."""
    fresh: bool
    """True when `doc` includes the awaited turn; False when the wait timed out first."""


class ContextClient:
    """Reads a session's compacted context from Redis."""

    def __init__(self, store: ContextStore, memory: MemoryStore | None = None) -> None:
        self.store = store
        self.memory = memory
        """Needed by build_prompt only; from_settings builds one on the same connection pool."""

    @classmethod
    def from_settings(cls, settings: Settings) -> ContextClient:
        store = ContextStore.from_settings(settings)
        return cls(store, MemoryStore(store.redis, settings))

    @classmethod
    def from_url(cls, redis_url: str, topic_prefix: str = "turnstream") -> ContextClient:
        """A client on `redis_url` reading the contexts written under `topic_prefix`."""
        return cls.from_settings(Settings(redis_url=redis_url, topic_prefix=topic_prefix))

    async def get(self, session_id: str, tenant: str | None = None) -> ContextDoc | None:
        """The session's current context, in one round trip; None when it has none."""
        return await self.store.read(session_key(session_id, tenant))

    async def wait_for(self, session_id: str, turn_id: str, timeout: float, tenant: str | None = None) -> WaitResult:
        """The context once it includes `turn_id`, or after `timeout` seconds the latest one with fresh=False."""
        key = session_key(session_id, tenant)
        deadline = time.monotonic() + timeout
        # subscribed before the first read: an update landing between the two is still seen
        async with self.store.updates(key) as updates:
            doc, included = await self.store.read_including(key, turn_id)
            while not included and (remaining := deadline - time.monotonic()) > 0:
                if await updates.next(remaining) is None:
                    break
                doc, included = await self.store.read_including(key, turn_id)
        if not included:
            # the last look: whatever landed since the last notification, however late
            doc, included = await self.store.read_including(key, turn_id)
        return WaitResult(doc, included)

    async def build_prompt(
        self, session_id: str, user_text: str, k: int | None = None, tenant: str | None = None, user_id: str | None = None
    ) -> Prompt:
        """The prompt for the session's next model call, in one Redis round trip and no LLM call.

        Memories are those of `user_id` (as `tenant:user_id`); without one, the session's own, as the
        write path stores memories of turns without a user under the session key. `k` defaults
        to settings.recall_k.
        """
        if self.memory is None:
            raise RuntimeError("build_prompt needs a MemoryStore: ContextClient(store, memory) or from_settings()")
        key = session_key(session_id, tenant)
        owner = owner_key(user_id, tenant, session_id)
        return await build_prompt(self.memory, self.store.keys(key).context, key, owner, user_text, k)

    async def aclose(self) -> None:
        await self.store.aclose()

    async def __aenter__(self) -> ContextClient:
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        await self.aclose()
