"""Redis losing every key, and the memory journal's replay bringing an owner's data back: for the resync tests."""

from __future__ import annotations

import asyncio
import time

from tests.support.conversations import turns_for
from tests.support.forgetting import TENANT
from turnstream.client import ContextClient
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.connect import redis_client
from turnstream.settings import Settings

INTERVAL = 1
REPLAY_TIMEOUT = 10 * INTERVAL + 30


async def drop_every_key(settings: Settings) -> int:
    """Delete every key under the test's prefix: the Redis a FLUSHALL leaves, without touching other tests' keys."""
    redis = redis_client(settings)
    try:
        keys = [key async for key in redis.scan_iter(match=f"{settings.topic_prefix}:*", count=1000)]
        if keys:
            await redis.delete(*keys)
        return len(keys)
    finally:
        await redis.aclose()


def long_chat(session_id: str, user_id: str) -> list[dict]:
    """A generated chat of the user's: tool calls, long answers, enough turns to be compacted."""
    return [{**turn, "tenant": TENANT, "user_id": user_id} for turn in turns_for(session_id, seed=7, count=60)]


async def owner_data(client: ContextClient, archive: ArchiveStore, owner: str) -> dict[str, object]:
    """What a prompt can draw on for `owner`: memories (access counts and first-written times aside), profile
    lines, archived turns session by session, each session's in age order.

    Across sessions the age order is not kept: the journal holds each session's entries on its session's
    partition, and a replay writes them back partition by partition."""
    memories = [
        (m.id, m.type, m.text, m.key, m.keywords, m.source_session, m.updated_at)
        for m in await client.memory.list(owner)
    ]
    profile, _ = await client.memory.profile(owner)
    return {
        "memories": memories,
        "profile": sorted(filter(None, profile.split("\n"))),
        "archive": [entry.to_json() for entry in sorted(await archive.entries(owner), key=lambda e: e.session)],
    }


async def replayed(client: ContextClient, timeout: float) -> float:
    """Seconds until the worker has declared the journal replayed; fails past `timeout`."""
    start, marker = time.monotonic(), client.store.layout.journal_replayed()
    while not await client.store.redis.exists(marker):
        assert time.monotonic() - start < timeout, "the memory journal was not replayed"
        await asyncio.sleep(0.2)
    return time.monotonic() - start
