"""SyncContextClient: ContextClient for threaded gateways (Flask, Django, WSGI), on a blocking redis.Redis.

The same reads, keys, script and prompt read as the asyncio ContextClient: both run the reads of
redis/reads.py and the one prompt read (prompt/read.py), this one through the blocking executor
(redis/blocking.py). A redis.Redis is thread-safe
(a pool of connections), so one client serves every thread of a gateway.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING

from turnstream.client.reads import (
    WaitResult,
    gateway_semantic,
    prompt_read,
    search_owner,
    search_read,
    session_and_owner,
)
from turnstream.prompt.assemble import Prompt
from turnstream.redis import reads
from turnstream.redis.blocking import execute, published, run, subscribed
from turnstream.redis.connect import sync_redis_client
from turnstream.redis.keys import KeyLayout
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings

if TYPE_CHECKING:
    from redis import Redis


class SyncContextClient:
    """Reads a session's compacted context from Redis, blocking the calling thread."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self.layout = KeyLayout(settings.topic_prefix)
        self.semantic = gateway_semantic(settings)

    @classmethod
    def from_settings(cls, settings: Settings) -> SyncContextClient:
        return cls(sync_redis_client(settings), settings)

    @classmethod
    def from_url(cls, redis_url: str, topic_prefix: str = "turnstream") -> SyncContextClient:
        """A client on `redis_url` reading the contexts written under `topic_prefix`."""
        return cls.from_settings(Settings(redis_url=redis_url, topic_prefix=topic_prefix))

    def get(self, session_id: str, tenant: str | None = None, user_id: str | None = None) -> ContextDoc | None:
        """The session's current context, in one round trip with `user_id` (two without); None when it has none."""
        key, owner = session_and_owner(session_id, tenant, user_id)
        return execute(self.redis, reads.context_read(self.layout, key, owner or self._owner_of(key)))

    def wait_for(
        self, session_id: str, turn_id: str, timeout: float, tenant: str | None = None, user_id: str | None = None
    ) -> WaitResult:
        """The context once it includes `turn_id`, or after `timeout` seconds the latest one with fresh=False.

        Each call subscribes to the session's channel on a connection of its own and closes it on
        return, on time-out and on error alike: a wait leaves no subscription behind.
        """
        key, owner = session_and_owner(session_id, tenant, user_id)
        owner = owner or self._owner_of(key)
        deadline = time.monotonic() + timeout
        # subscribed (and confirmed) before the first read: an update landing between the two is still seen
        with subscribed(self.redis, self.layout.updates_channel(key)) as pubsub:
            doc, included = self._read_including(key, owner, turn_id)
            while not included and (remaining := deadline - time.monotonic()) > 0:
                if published(pubsub, remaining):
                    doc, included = self._read_including(key, owner, turn_id)
        if not included:
            # the last look: whatever landed since the last notification, however late
            doc, included = self._read_including(key, owner, turn_id)
        return WaitResult(doc, included)

    def build_prompt(
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

        As ContextClient.build_prompt: memories and recalled turns are those of `user_id` (a second
        round trip without it), `k` defaults to settings.recall_k, `record=False` only looks (as does any
        prompt of a session without a context), `budget_tokens` replaces settings.prompt_budget_tokens for
        this prompt, `provenance=True` adds each message's sources (`Prompt.sources`).
        """
        key, owner = session_and_owner(session_id, tenant, user_id)
        owner = owner or self._owner_of(key)
        read = prompt_read(
            self.layout, self.settings, self.semantic, key, owner, user_text, k, record, budget_tokens, provenance
        )
        return run(self.redis, read)

    def search(
        self,
        text: str,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        tenant: str | None = None,
        k: int | None = None,
        budget_tokens: int | None = None,
    ) -> Prompt:
        """What recall finds for `text` among the memories and archived turns of `user_id` (or of `session_id`'s own
        owner), in one round trip, recording nothing: ContextClient.search, the same search read (prompt/read.py)."""
        owner = search_owner(user_id, session_id, tenant)
        return run(self.redis, search_read(self.layout, self.settings, self.semantic, owner, text, k, budget_tokens))

    def forgotten_key(self, session_key: str) -> bool:
        """Whether the session of `session_key` was erased (`turnstream forget`): its forget marker is set."""
        return execute(self.redis, reads.forgotten_read(self.layout, session_key))

    def _owner_of(self, session_key: str) -> str:
        return execute(self.redis, reads.owner_read(self.layout, session_key))

    def _read_including(self, key: str, owner: str, turn_id: str) -> tuple[ContextDoc | None, bool]:
        """The stored context and whether it includes `turn_id`, in one round trip."""
        return execute(self.redis, reads.including_read(self.layout, key, owner, turn_id))

    def close(self) -> None:
        self.redis.close()

    def __enter__(self) -> SyncContextClient:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()
