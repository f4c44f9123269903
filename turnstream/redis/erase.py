"""Erasure in Redis: everything of one owner (a user), or of one session within its owner's data.

Counts come back per kind, so `turnstream forget` can say what it removed; with `dry_run` nothing is
deleted and the counts say what would go. The Table rows are not here: the worker that owns a session
drops its row when it reads the session's forget record (schemas/control.py), and only then is Redis
erased, so no turn in flight writes anything back.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import orjson
from redis.asyncio import Redis

from turnstream.redis.archive import ArchiveStore
from turnstream.redis.keys import KeyLayout
from turnstream.redis.memory_store import MemoryStore
from turnstream.redis.prefix import DELETE_BATCH, SCAN_COUNT
from turnstream.redis.reads import reply_text
from turnstream.schemas.ids import session_owner
from turnstream.settings import Settings

KINDS = {
    "ctx": "contexts",
    "applied": "applied-turn sets",
    "injected": "recall lists",
    "mem": "memory hashes",
    "memcreated": "memory hashes",
    "memaccess": "memory hashes",
    "memkw": "keyword sets",
    "profile": "profiles",
    "arcent": "archive keys",
    "arcat": "archive keys",
    "arcrec": "archive keys",
    "arcmeta": "archive keys",
    "arcdict": "archive keys",
    "arcpost": "archive term postings",
    "owner": "owner pointers",
    # the archive layout before short ids, until its keys expire or are deleted (docs/operations.md)
    "arc": "archive keys",
    "arcpos": "archive keys",
    "arcterms": "archive keys",
    "arcage": "archive keys",
    "arcstat": "archive keys",
    "arcterm": "archive term postings",
}
"""Key kind (redis/keys.py) -> the name it is counted under."""


def glob_escape(text: str) -> str:
    """`text` as a literal inside a Redis SCAN/HSCAN pattern."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


class Eraser:
    """Finds and deletes an owner's or a session's keys; every call returns {kind: count}."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.layout = KeyLayout(settings.topic_prefix)
        self.archive = ArchiveStore(redis, settings)
        self.memories = MemoryStore(redis, settings)

    async def unconfirmed(self, sessions: list[str], requested_at: float) -> list[str]:
        """The sessions whose worker has not yet confirmed an erasure asked at `requested_at` (its forget marker)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in sessions:  # GETs, not one MGET: on a Redis Cluster the markers sit in different slots
                pipe.get(self.layout.forgotten(key))
            values = await pipe.execute()
        return [key for key, value in zip(sessions, values) if value is None or float(value) < requested_at]

    async def owner_of(self, session_key: str) -> str:
        """The session's owner as its pointer names it; the session itself when the pointer is gone."""
        owner = await self.redis.get(self.layout.owner_pointer(session_key))
        return reply_text(owner) if owner else session_owner(session_key)

    async def owner_keys(self, owner: str) -> list[str]:
        """Every key under the owner's hash tag but the forget marker (one SCAN of the keyspace; a cluster needs it
        per node)."""
        pattern = f"{glob_escape(self.layout.prefix)}:*:{{{glob_escape(owner)}}}*"
        found = {key.decode() async for key in self.redis.scan_iter(match=pattern, count=SCAN_COUNT)}
        return sorted(key for key in found if self._kind(key) != "forgot")

    async def sessions_of(self, owner: str) -> set[str]:
        """The session keys the owner's data names: contexts, recall lists, archived turns, memories."""
        tag = "{" + owner + "}:"
        found = set()
        for key in await self.owner_keys(owner):
            kind, _, rest = key[len(self.layout.prefix) + 1 :].partition(":")
            if kind in ("ctx", "applied", "injected") and rest.startswith(tag):
                found.add(rest[len(tag) :])
        keys = self.layout.owner(owner)
        async for field, _ in self.redis.hscan_iter(keys.positions, match="*#*"):
            found.add(field.decode().rsplit("#", 1)[0])
        for raw in (await self.redis.hgetall(keys.memories)).values():
            source = orjson.loads(raw).get("source_session")
            if source:
                found.add(source)
        return found

    async def erase_owner(self, owner: str, sessions: set[str], dry_run: bool) -> Counter[str]:
        """Every key of the owner, and the owner pointers of `sessions`."""
        keys = await self.owner_keys(owner)
        counts = await self._count(owner, keys)
        pointers = [p for p in (self.layout.owner_pointer(s) for s in sorted(sessions)) if p not in keys]
        counts["owner pointers"] += sum([await self.redis.exists(p) for p in pointers])
        if not dry_run:
            for start in range(0, len(keys), DELETE_BATCH):
                await self.redis.unlink(*keys[start : start + DELETE_BATCH])
            for pointer in pointers:
                await self.redis.unlink(pointer)
        return counts

    async def erase_session(self, owner: str, session: str, dry_run: bool) -> Counter[str]:
        """The session's context, applied turns, recall list and pointer; its archived turns and the memories last
        taken from it. The owner's profile is one merged text and stays (erase the user to remove it)."""
        if owner == session_owner(session):  # no user: the session owns everything under its tag
            return await self.erase_owner(owner, {session}, dry_run)
        names = self.layout.session(owner, session)
        plain = [names.context, names.applied, names.injected, self.layout.owner_pointer(session)]
        present = [key for key in plain if await self.redis.exists(key)]
        counts: Counter[str] = Counter(KINDS.get(self._kind(key), "owner pointers") for key in present)
        mine, entries = await self._session_data(owner, session)
        counts["archived turns"] = len(entries)
        counts["memories"] = len(mine)
        if dry_run:
            return counts
        if present:
            await self.redis.unlink(*present)
        await self.archive.evict(owner, entries)
        await self.memories.forget(owner, mine)
        return counts

    async def journal_ids(self, owner: str, session: str | None) -> tuple[list[str], list[str]]:
        """Ids of the memories and archived turns erasing the owner (or, with `session`, that session) removes:
        what the memory journal gets tombstones for."""
        if session is None or owner == session_owner(session):
            memories = await self.redis.hkeys(self.layout.owner(owner).memories)
            return sorted(reply_text(id_) for id_ in memories), sorted(await self.archive.stable_ids(owner))
        mine, entries = await self._session_data(owner, session)
        return sorted(mine), sorted(await self.archive.stable_ids(owner, entries))

    async def _session_data(self, owner: str, session: str) -> tuple[dict[str, dict[str, Any]], list[bytes]]:
        """The memories last taken from `session` (id -> memory) and the short ids of its archived turns."""
        keys = self.layout.owner(owner)
        entries = [entry async for _, entry in self.redis.hscan_iter(keys.positions, match=glob_escape(session) + "#*")]
        memories = {
            reply_text(id_): orjson.loads(raw) for id_, raw in (await self.redis.hgetall(keys.memories)).items()
        }
        return {id_: memory for id_, memory in memories.items() if memory.get("source_session") == session}, entries

    async def _count(self, owner: str, keys: list[str]) -> Counter[str]:
        counts: Counter[str] = Counter(KINDS.get(self._kind(key), "other keys") for key in keys)
        names = self.layout.owner(owner)
        counts["memories"] = await self.redis.hlen(names.memories)
        counts["archived turns"] = await self.redis.hlen(names.archive)
        for merged in ("memory hashes", "archive keys"):
            counts.pop(merged, None)  # counted as memories and archived turns
        return counts

    def _kind(self, key: str) -> str:
        return key[len(self.layout.prefix) + 1 :].split(":", 1)[0]
