"""SyncContextClient: ContextClient for threaded gateways (Flask, Django, WSGI), on a blocking redis.Redis.

Same methods, keys, script and prompt assembly as the asyncio ContextClient (client/reads.py,
memory/reads.py, memory/prompt.py); only the I/O differs. A redis.Redis is thread-safe (a pool of
connections), so one client serves every thread of a gateway.
"""

from __future__ import annotations

import time
from types import TracebackType

from redis import Redis
from redis.client import PubSub
from redis.exceptions import TimeoutError as RedisTimeoutError

from turnstream.client.reads import WaitResult, doc_from, owner_from, session_and_owner
from turnstream.client.updates import SUBSCRIBE_TIMEOUT
from turnstream.connections import sync_redis_client
from turnstream.memory.prompt import Prompt, budgeted, finish_prompt, prompt_query
from turnstream.memory.reads import decode_recall, recall_request
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.keys import KeyLayout
from turnstream.schemas.scripts import RECALL
from turnstream.settings import Settings


class SyncContextClient:
    """Reads a session's compacted context from Redis, blocking the calling thread."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self.layout = KeyLayout(settings.topic_prefix)
        self._recall = redis.register_script(RECALL.text())  # EVALSHA, loaded on first use

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
        context = self.layout.session(owner or self._owner_of(key), key).context
        return doc_from(self.redis.hget(context, "doc"))

    def wait_for(
        self, session_id: str, turn_id: str, timeout: float, tenant: str | None = None, user_id: str | None = None
    ) -> WaitResult:
        """The context once it includes `turn_id`, or after `timeout` seconds the latest one with fresh=False.

        Each call subscribes to the session's channel on a connection of its own and closes it on
        return, on time-out and on error alike: a wait leaves no subscription behind.
        """
        key, owner = session_and_owner(session_id, tenant, user_id)
        deadline = time.monotonic() + timeout
        pubsub = self.redis.pubsub()  # type: ignore[no-untyped-call]  # unannotated in redis-py
        try:
            # subscribed (and confirmed) before the first read: an update landing between the two is still seen
            _subscribe(pubsub, self.layout.updates_channel(key))
            doc, included = self._read_including(key, owner, turn_id)
            while not included and (remaining := deadline - time.monotonic()) > 0:
                message = pubsub.get_message(timeout=remaining)
                if message is not None and message["type"] == "message":
                    doc, included = self._read_including(key, owner, turn_id)
        finally:
            pubsub.close()
        if not included:
            # the last look: whatever landed since the last notification, however late
            doc, included = self._read_including(key, owner, turn_id)
        return WaitResult(doc, included)

    def build_prompt(
        self, session_id: str, user_text: str, k: int | None = None, tenant: str | None = None,
        user_id: str | None = None, record: bool = True, budget_tokens: int | None = None,
    ) -> Prompt:
        """The prompt for the session's next model call, in one Redis round trip and no LLM call.

        As ContextClient.build_prompt: memories and recalled turns are those of `user_id` (a second
        round trip without it), `k` defaults to settings.recall_k, `record=False` only looks,
        `budget_tokens` replaces settings.prompt_budget_tokens for this prompt.
        """
        key, owner = session_and_owner(session_id, tenant, user_id)
        settings = budgeted(self.settings, budget_tokens)
        query = prompt_query(user_text, k, settings)
        keys, args = recall_request(self.layout, settings, owner or self._owner_of(key), key, query.keywords,
                                    query.k, query.archive, record, time.time())
        return finish_prompt(query, decode_recall(self._recall(keys=keys, args=args)), settings)

    def _owner_of(self, session_key: str) -> str:
        return owner_from(self.redis.get(self.layout.owner_pointer(session_key)), session_key)

    def _read_including(self, key: str, owner: str | None, turn_id: str) -> tuple[ContextDoc | None, bool]:
        """The stored context and whether it includes `turn_id`, in one round trip (two without the owner)."""
        keys = self.layout.session(owner or self._owner_of(key), key)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(keys.context, "doc")
            pipe.zscore(keys.applied, turn_id)
            raw, score = pipe.execute()
        return doc_from(raw), score is not None

    def close(self) -> None:
        self.redis.close()

    def __enter__(self) -> SyncContextClient:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()


def _subscribe(pubsub: PubSub, channel: str) -> None:
    """Subscribe and wait for the server's confirmation, so no later publish goes unseen."""
    pubsub.subscribe(channel)
    deadline = time.monotonic() + SUBSCRIBE_TIMEOUT
    while (remaining := deadline - time.monotonic()) > 0:
        message = pubsub.get_message(timeout=remaining)
        if message is not None and message["type"] == "subscribe":
            return
    raise RedisTimeoutError(f"Redis did not confirm the subscription to {channel}")
