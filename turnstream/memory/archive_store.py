"""ArchiveStore: every applied turn of an owner in Redis, with a BM25 index built on the write path.

The layout is in schemas/keys.py. Postings are sorted sets of entry id -> the entry's BM25 term weight
(length-normalised at write time), so the read script takes each query term's best entries with one
ZREVRANGE and its work stays bounded however large the archive grows.
"""

from __future__ import annotations

from typing import Any, Sequence

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from turnstream.schemas.keys import KeyLayout, OwnerKeys
from turnstream.memory.archive import ArchiveEntry
from turnstream.memory.scripts import load_script, queue_script, run_pipeline
from turnstream.schemas.scripts import ARCHIVE_APPEND, ARCHIVE_EVICT, Call
from turnstream.settings import Settings

BM25_K1 = 1.2
BM25_B = 0.75
EVICT_SHARE = 100
"""A full archive evicts a hundredth of its cap at a time, so most appends need no second call."""


class ArchiveStore:
    """Append-only per-owner archive of turns: idempotent appends, capped, expiring with the owner."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.layout = KeyLayout(settings.topic_prefix)
        self._ttl = settings.owner_ttl_seconds
        self._cap = settings.archive_max_entries
        self._append = load_script(redis, ARCHIVE_APPEND)
        self._evict = load_script(redis, ARCHIVE_EVICT)

    async def queue_append(self, pipe: Pipeline, owner: str, entries: Sequence[ArchiveEntry]) -> None:
        """Add the append of `entries` to `pipe`; its reply goes to `evict_overflow` after execution."""
        keys = self.layout.owner(owner)
        postings: dict[str, int] = {}
        appended = []
        for entry in entries:
            counts = entry.term_counts()
            length = sum(counts.values())
            record = f"{length}\t{entry.position_field}\t{' '.join(counts)}"
            # one argument for all of an entry's postings: a pipeline of a few hundred turns would otherwise
            # carry thousands of arguments, each encoded on its own by the client
            pairs = " ".join(f"{postings.setdefault(keys.term_prefix + term, len(postings) + 1)}:{frequency}"
                             for term, frequency in counts.items())
            appended.append(dict(id=entry.id, json=entry.to_json(), record=record, field=entry.position_field,
                                 length=length, postings=pairs))
        await queue_script(self._append, pipe, ARCHIVE_APPEND.call(
            **self._fixed(keys), postings=list(postings), ttl=self._ttl, cap=self._cap,
            evict_chunk=max(1, self._cap // EVICT_SHARE), k1=BM25_K1, b=BM25_B, entries=appended))

    async def append(self, owner: str, entries: Sequence[ArchiveEntry]) -> int:
        """Append `entries` (those already there are skipped) and evict over the cap; returns how many were new."""
        if not entries:
            return 0
        (reply,) = await run_pipeline(self.redis, lambda pipe: self.queue_append(pipe, owner, entries))
        await self.evict_overflow(owner, reply)
        return int(reply[0])

    async def evict_overflow(self, owner: str, append_reply: Sequence[bytes | int]) -> list[str]:
        """Evict the entries an append reported over the cap, with their postings; returns their ids."""
        over = list(zip(append_reply[1::2], append_reply[2::2]))
        if not over:
            return []
        call = self.evict_call(owner, over)
        await self._evict(keys=call.keys, args=call.args)
        return [entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id) for entry_id, _ in over]

    def evict_call(self, owner: str, over: Sequence[tuple[Any, Any]]) -> Call:
        """The eviction of `over`, (id, terms record) pairs as an append reports them."""
        keys = self.layout.owner(owner)
        postings: set[str] = set()
        evicted = []
        for entry_id, record in over:
            # an entry without its record (never expected) still leaves the age order, or the cap would stick
            length, field, terms = record.decode().split("\t", 2) if record else ("0", "", "")
            postings.update(keys.term_prefix + term for term in terms.split())
            evicted.append(dict(id=entry_id, field=field, length=length))
        return ARCHIVE_EVICT.call(**self._fixed(keys), postings=sorted(postings), entries=evicted)

    async def entries(self, owner: str) -> list[ArchiveEntry]:
        """Every archived entry of `owner`, oldest first."""
        keys = self.layout.owner(owner)
        ids = await self.redis.zrange(keys.ages, 0, -1)
        raws = await self.redis.hmget(keys.archive, ids) if ids else []
        return [ArchiveEntry.from_json(raw) for raw in raws if raw is not None]

    @staticmethod
    def _fixed(keys: OwnerKeys) -> dict[str, str]:
        """The keys both archive scripts start with, by name."""
        return dict(archive=keys.archive, positions=keys.positions, entry_terms=keys.entry_terms, ages=keys.ages,
                    stats=keys.stats)

