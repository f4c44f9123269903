"""The inspector's reads (turnstream inspect): Redis only (never Kafka, never the worker's Table), and nothing it reads is changed.

Sessions are found with SCAN over the context keys (redis/keys.py), a bounded number of calls (on a
Redis Cluster node by node, each with its own cursor), never KEYS, so a large keyspace costs the
inspector time, not the Redis its gateways use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

from pydantic import ValidationError
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.cluster import ClusterNode

from turnstream.redis.connect import ping
from turnstream.redis.keys import parse_context_key, scan_pattern
from turnstream.redis.memory_store import MemoryStore
from turnstream.redis.reader import ContextReader
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.memory import Memory
from turnstream.settings import Settings

MAX_LISTED = 200
"""Sessions one list page reads; a search narrows it."""
SCAN_COUNT = 500
"""Keys Redis looks at per SCAN call of a list page: half a full scan's (prefix.SCAN_COUNT), so a page that finds its
sessions early stops early."""
MAX_SCAN_CALLS = 200
"""SCAN calls per list page: at most about 100,000 keys looked at, however large the keyspace."""
MAX_DROPPED_SHOWN = 30
"""Newest dropped turns looked up in the archive for one session page."""


@dataclass(frozen=True, slots=True)
class OwnerData:
    """What a session's owner has beyond the session: typed memories (oldest first) and the profile."""

    memories: list[Memory]
    profile: str
    profile_version: int


@dataclass(frozen=True, slots=True)
class Found:
    """Context documents a list page read, with their owners."""

    docs: list[tuple[str, ContextDoc]]
    complete: bool
    """False when the scan stopped at MAX_LISTED or MAX_SCAN_CALLS before the end of the keyspace."""
    unreadable: int = 0
    """Documents found that do not validate as a ContextDoc, left out of `docs`."""


class InspectReader:
    """Read-only views of what the worker wrote to Redis."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self.contexts = ContextReader(redis, settings)
        self.memory = MemoryStore(redis, settings)
        self.layout = self.contexts.layout

    async def ping(self) -> None:
        await ping(self.redis)

    async def sessions(self, query: str = "") -> Found:
        """Context documents whose key holds `query` (any case), up to MAX_LISTED."""
        keys, whole = await self._context_keys(scan_pattern(self.layout.prefix, query), MAX_SCAN_CALLS, MAX_LISTED)
        keys = keys[:MAX_LISTED]
        async with self.redis.pipeline(transaction=False) as pipe:
            for key, _, _ in keys:
                pipe.hget(key, "doc")
            raws = await pipe.execute() if keys else []
        docs, unreadable = [], 0
        for (_, owner, _), raw in zip(keys, raws):
            if raw is None:
                continue  # expired between the scan and the read
            try:
                docs.append((owner, ContextDoc.from_json(raw)))
            except ValidationError:  # one bad document must not hide every other session
                unreadable += 1
        return Found(docs, whole and len(keys) < MAX_LISTED, unreadable)

    async def session_keys(self) -> list[str]:
        """The key of every session with a context under the prefix, sorted: the whole keyspace is scanned, in
        SCAN_COUNT steps (`turnstream diff` samples from it)."""
        keys, _ = await self._context_keys(scan_pattern(self.layout.prefix, ""), None, None)
        return sorted({session for _, _, session in keys})

    async def _context_keys(
        self, pattern: str, max_calls: int | None, max_keys: int | None
    ) -> tuple[list[tuple[bytes, str, str]], bool]:
        """Context keys matching `pattern` with their owners and session keys, and whether the scan reached the end of
        every node; stopped after `max_calls` SCAN calls or `max_keys` keys (None: no bound)."""
        keys: list[tuple[bytes, str, str]] = []
        calls, ended = 0, 0
        nodes = await self._scan_nodes()
        for node in nodes:
            cursor = -1  # not started
            while cursor != 0 and calls < (max_calls or math.inf) and len(keys) < (max_keys or math.inf):
                cursor, batch = await self._scan(max(cursor, 0), pattern, node)
                calls += 1
                for key in batch:
                    if (parsed := parse_context_key(self.layout.prefix, key.decode())) is not None:
                        keys.append((key, *parsed))
            ended += cursor == 0
        return keys, ended == len(nodes)

    async def _scan_nodes(self) -> list[ClusterNode | None]:
        """Where SCAN runs: every primary of a Redis Cluster, each with a cursor of its own; else the one server."""
        if isinstance(self.redis, RedisCluster):
            await self.redis.initialize()  # learns the nodes once
            return list(self.redis.get_primaries())
        return [None]

    async def _scan(self, cursor: int, pattern: str, node: ClusterNode | None) -> tuple[int, list[bytes]]:
        # redis-py types a reply's keys as bytes or str (these clients do not decode: bytes), and a cluster's cursors
        # as one server's (they are one per node)
        if node is None:
            return cast(
                tuple[int, list[bytes]], await self.redis.scan(cursor, match=pattern, count=SCAN_COUNT, _type="hash")
            )
        cursors, batch = cast(
            tuple[dict[str, int], list[bytes]],
            await self.redis.scan(cursor, match=pattern, count=SCAN_COUNT, _type="hash", target_nodes=node),
        )
        return cursors[node.name], batch

    async def session(self, session_key: str) -> tuple[str, ContextDoc] | None:
        """The session's current owner and context (through its owner pointer), or None."""
        owner = await self.contexts.owner_of(session_key)
        doc = await self.contexts.read(session_key, owner)
        return None if doc is None else (owner, doc)

    async def owner(self, owner: str) -> OwnerData:
        """The owner's typed memories (oldest first) and profile."""
        memories = await self.memory.list(owner)
        profile, version = await self.memory.profile(owner)
        return OwnerData(memories, profile, version)

    async def archived(self, owner: str, session_key: str, positions: list[int]) -> list[ArchiveEntry]:
        """The owner's archive entries of the session's turns at `positions` (those still archived)."""
        if not positions:
            return []
        keys = self.layout.owner(owner)
        ids = await self.redis.hmget(keys.positions, [f"{session_key}#{p}" for p in positions])
        present = [i for i in ids if i is not None]
        raws = await self.redis.hmget(keys.archive, present) if present else []
        return [ArchiveEntry.from_json(raw) for raw in raws if raw is not None]

    async def aclose(self) -> None:
        await self.contexts.aclose()
